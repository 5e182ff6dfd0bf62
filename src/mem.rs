//! Memory figures: sizes as people write them ("16G") and read them
//! ("1.5 GiB"), and the memory this process may use.

/// `x` bytes as "1.5 GiB" (or MiB, KiB).
pub fn human_bytes(x: u64) -> String {
    let units = [("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (name, shift) in units {
        if x >= 1 << shift {
            return format!("{:.1} {name}", x as f64 / (1u64 << shift) as f64);
        }
    }
    format!("{x} bytes")
}

/// What the process's own limits leave it ([`crate::alloc::process_limits`]):
/// `RLIMIT_AS` (`ulimit -v`, what batch schedulers set as h_vmem or vmem)
/// less its address space now, and `RLIMIT_DATA` (`ulimit -d`) less its
/// data now; `None` when neither is set (or elsewhere than Linux).
pub fn process_limit() -> Option<u64> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let [space, data] = crate::alloc::process_limits();
    if space.is_none() && data.is_none() {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let used = |key| kb_field(&status, key).unwrap_or(0);
    let space = space.map(|l| l.saturating_sub(used("VmSize:")));
    let data = data.map(|l| l.saturating_sub(used("VmData:")));
    [space, data].into_iter().flatten().min()
}

/// The bytes of a `Key:   N kB` line of a /proc file (`/proc/meminfo`,
/// `/proc/self/status`).
fn kb_field(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find(|l| l.starts_with(key))?
        .split_whitespace()
        .nth(1)?
        .parse::<u64>()
        .ok()
        .map(|kb| kb * 1024)
}

/// Memory this process may use: the least of `MemAvailable`, the cgroup
/// limit and what the process's own limits leave ([`process_limit`];
/// `None` when none can be read).
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let avail = meminfo
        .as_deref()
        .and_then(|m| kb_field(m, "MemAvailable:"));
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    [avail, cgroup, process_limit()].into_iter().flatten().min()
}

/// A size in bytes: digits with an optional K, M, G or T (powers of 1024; a
/// trailing B or iB is accepted).
pub fn parse_size(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let shift = match c.to_ascii_uppercase() {
                'K' => 10,
                'M' => 20,
                'G' => 30,
                'T' => 40,
                _ => return Err(format!("'{s}': unknown unit '{c}' (K, M, G or T)")),
            };
            (&t[..i], shift)
        }
        _ => (t, 0),
    };
    let x: f64 = digits
        .parse()
        .map_err(|_| format!("'{s}' is not a size (e.g. 16G, 500M, 1000000)"))?;
    if !x.is_finite() || x < 0.0 {
        return Err(format!("'{s}' is not a size"));
    }
    Ok((x * (1u64 << shift) as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_trip() {
        assert_eq!(parse_size("16G"), Ok(16 << 30));
        assert_eq!(parse_size("500M"), Ok(500 << 20));
        assert_eq!(parse_size("1.5KiB"), Ok(1536));
        assert_eq!(parse_size("1000000"), Ok(1_000_000));
        assert!(parse_size("3X").is_err());
        assert!(parse_size("-1G").is_err());
        assert_eq!(human_bytes(3 << 29), "1.5 GiB");
        assert_eq!(human_bytes(1023), "1023 bytes");
    }
}
