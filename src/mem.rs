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

/// Memory this process may use: the smaller of `MemAvailable` and the
/// cgroup limit (`None` when neither can be read).
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let avail = meminfo.as_deref().and_then(|m| {
        m.lines()
            .find(|l| l.starts_with("MemAvailable:"))?
            .split_whitespace()
            .nth(1)?
            .parse::<u64>()
            .ok()
            .map(|kb| kb * 1024)
    });
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    match (avail, cgroup) {
        (Some(a), Some(c)) => Some(a.min(c)),
        (a, c) => a.or(c),
    }
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
