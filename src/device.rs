//! Where work runs: the choice (`--device`) that both `index` and `map`
//! take, and where a stage did run, for their reports.

use crate::Choice;

/// Where to build the suffix array and FM tables (`index`), or to search
/// exact reads (`map`). The output is the same on every device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Device {
    /// The GPU when one is present and the work is large enough for it
    /// (`index`: [`crate::sa::GPU_AUTO_MIN_BASES`]), else the CPU.
    #[default]
    Auto,
    /// The CPU.
    Cpu,
    /// The GPU (the CPU, with a notice, when there is none).
    Gpu,
}

impl Choice for Device {
    const ALL: &'static [Self] = &[Device::Auto, Device::Cpu, Device::Gpu];

    fn name(self) -> &'static str {
        match self {
            Device::Auto => "auto",
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Device::Auto => {
                "The GPU when one is present and the work is large enough for it, else the CPU"
            }
            Device::Cpu => "The CPU",
            Device::Gpu => "The GPU (the CPU, with a notice, when there is none)",
        }
    }
}

/// Where a stage ran, as reports print it (`cpu`, `gpu`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ran {
    /// On the CPU.
    #[default]
    Cpu,
    /// On the GPU.
    Gpu,
}

impl std::fmt::Display for Ran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Ran::Cpu => "cpu",
            Ran::Gpu => "gpu",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for &d in Device::ALL {
            assert_eq!(Device::from_name(d.name()), Some(d));
        }
        assert_eq!(Device::from_name("tpu"), None);
    }
}
