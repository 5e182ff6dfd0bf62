//! The GPU: kernels compile (NVRTC, no device needed), and, on a machine with
//! a device, every step and algorithm of the CUDA backend equals the CPU
//! backend's on random inputs of many sizes.
//!
//! Without NVRTC the compile test prints that it was skipped, unless
//! `FMALIGN_REQUIRE_NVRTC` is set (CI sets it after installing NVRTC from
//! PyPI): then it fails. Without a device the comparison tests print that
//! they were skipped; scripts/gpu-check.sh runs them on the GPU machine.

use fmalign::gpu;

/// Prints a skip notice past libtest's output capture (which only takes
/// `print!`/`eprint!`), so that a skipped test is seen even when it passes.
fn skip(msg: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED {msg}");
}

/// Whether NVRTC can be loaded; if not, `test` is reported skipped, unless
/// FMALIGN_REQUIRE_NVRTC is set (CI), where it fails.
fn nvrtc_for(test: &str) -> bool {
    if gpu::nvrtc_present() {
        return true;
    }
    let msg = "NVRTC not found (libnvrtc.so.13 not in LD_LIBRARY_PATH)";
    if std::env::var_os("FMALIGN_REQUIRE_NVRTC").is_some() {
        panic!("{msg}, but FMALIGN_REQUIRE_NVRTC is set");
    }
    skip(&format!("{test}: {msg}"));
    false
}

/// Every kernel name the CUDA backend can ask for (src/sa/cuda/).
fn expected_kernels() -> Vec<String> {
    let mut k: Vec<String> = [
        "pack_text",
        "unsorted_flags",
        "flag_tiles",
        "scan_carries",
        "segscan_carries",
        "compact_u8",
        "compact_u32",
        "compact_u64",
        "map_exact",
        "map_exact_packed",
        "map_verify",
        "map_locate_u32",
        "map_locate_u64",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for w in ["u32", "u64"] {
        for name in [
            "iota_from",
            "iota_mod3",
            "fill",
            "head_index",
            "head_values",
            "scatter_slots",
            "symbols",
            "fetch",
            "slots",
            "split_positions",
            "add_flags",
            "sub_const",
            "widen",
            "in_range",
            "mod3_is",
            "text_heads",
            "segment_lengths",
            "head_flags",
            "scan_tiles",
            "scan_apply",
            "segscan_tiles",
            "segscan_apply",
            "compact_index",
            "radix_hist",
            "merge_asc",
            "merge_dc3",
            "merge_cover",
            "residues",
            "cover_ranks",
            "find_zero",
            "occ_lines",
            "sample_sa",
        ] {
            k.push(format!("{name}_{w}"));
        }
        for v in ["u32", "u64"] {
            k.push(format!("text_keys_{w}_{v}"));
            k.push(format!("triple_keys_{w}_{v}"));
        }
        for v in ["u8", "u32", "u64"] {
            k.push(format!("radix_scatter_{w}_{v}"));
            k.push(format!("gather_{v}_{w}"));
            k.push(format!("scatter_{v}_{w}"));
        }
    }
    k
}

#[test]
fn kernels_compile_for_sm_90() {
    if !nvrtc_for("kernels_compile_for_sm_90") {
        return;
    }
    let mut entries = Vec::new();
    for &(module, src) in gpu::SOURCES {
        let c = gpu::compile(module, src, "sm_90", false);
        match c.result {
            Ok(ptx) => {
                for line in ptx.lines() {
                    if let Some(rest) = line.split(".entry ").nth(1) {
                        entries.push(rest.trim_end_matches('(').trim().to_string());
                    }
                }
            }
            Err(log) => panic!("gpu/{module}.cu does not compile for sm_90:\n{log}"),
        }
    }
    for k in expected_kernels() {
        assert!(entries.contains(&k), "kernel {k} missing from gpu/");
    }
}

/// Machine code for sm_90 (what the device loads first, without its PTX
/// JIT): every module, an ELF image holding each of its kernels; a broken
/// kernel's log; none for a virtual architecture.
#[test]
fn kernels_compile_to_cubin_for_sm_90() {
    if !nvrtc_for("kernels_compile_to_cubin_for_sm_90") {
        return;
    }
    for &(module, src) in gpu::SOURCES {
        let cubin = gpu::compile_cubin(module, src, "sm_90", false)
            .unwrap_or_else(|e| panic!("gpu/{module}.cu: no CUBIN for sm_90: {e}"));
        assert!(
            cubin.starts_with(b"\x7fELF"),
            "gpu/{module}.cu: not an ELF image"
        );
        let ptx = gpu::compile(module, src, "sm_90", false).result.unwrap();
        for line in ptx.lines() {
            if let Some(rest) = line.split(".entry ").nth(1) {
                let name = rest.trim_end_matches('(').trim();
                assert!(
                    cubin.windows(name.len()).any(|w| w == name.as_bytes()),
                    "gpu/{module}.cu: kernel {name} not in its CUBIN"
                );
            }
        }
    }
    let log = gpu::compile_cubin(
        "broken",
        "extern \"C\" __global__ void k(u32* x) { x[0] = undefined_name; }",
        "sm_90",
        false,
    )
    .expect_err("a broken kernel compiled");
    assert!(log.contains("undefined_name"), "log: {log}");
    let (module, src) = gpu::SOURCES[0];
    assert!(gpu::compile_cubin(module, src, "compute_75", false).is_err());
}

#[test]
fn a_kernel_that_does_not_compile_is_reported() {
    if !gpu::nvrtc_present() {
        skip("a_kernel_that_does_not_compile_is_reported: NVRTC not found");
        return;
    }
    let c = gpu::compile(
        "broken",
        "extern \"C\" __global__ void k(u32* x) { x[0] = undefined_name; }",
        "sm_90",
        false,
    );
    let log = c.result.expect_err("a broken kernel compiled");
    assert!(log.contains("undefined_name"), "log: {log}");
}

#[test]
fn gpu_info_exits_zero_without_a_device() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fmalign"))
        .arg("gpu-info")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "gpu-info failed: {text}");
    match gpu::probe().why_not() {
        Some(why) => assert!(text.contains(&format!("gpu: none: {why}")), "{text}"),
        None => assert!(text.contains("device 0:"), "{text}"),
    }
    if gpu::nvrtc_present() {
        let n = gpu::SOURCES.len();
        assert!(
            text.contains(&format!("kernels: {n} of {n} compiled (sm_90)")),
            "{text}"
        );
    }
}

/// `gpu-info --ptx-dir` (what scripts/check/ptxas.sh assembles) writes each
/// module's PTX, the same text NVRTC gives `compile`.
#[test]
fn gpu_info_writes_each_modules_ptx() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fmalign"))
        .args(["gpu-info", "--ptx-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    if !gpu::nvrtc_present() {
        assert!(!out.status.success(), "--ptx-dir without NVRTC succeeded");
        assert!(String::from_utf8_lossy(&out.stderr).contains("no NVRTC"));
        skip("gpu_info_writes_each_modules_ptx: NVRTC not found");
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for &(module, src) in gpu::SOURCES {
        let written = std::fs::read_to_string(dir.path().join(format!("{module}.ptx"))).unwrap();
        let compiled = gpu::compile(module, src, "sm_90", false).result.unwrap();
        assert_eq!(written, compiled, "gpu/{module}.cu");
        assert!(gpu::ptx_entries(&written) > 0, "gpu/{module}.cu");
    }
}

#[cfg(feature = "gpu")]
mod device {
    //! Differential tests: CUDA backend against the CPU backend.

    use fmalign::sa::cpu::Cpu;
    use fmalign::sa::cuda::Cuda;
    use fmalign::sa::steps::{Backend, Elem, Iota, Order, RankLayout, Word};
    use fmalign::sa::{self, SaAlgorithm};

    #[track_caller]
    fn cuda() -> Option<Cuda> {
        if let Some(why) = fmalign::gpu::probe().why_not() {
            let at = std::panic::Location::caller();
            super::skip(&format!(
                "GPU test at {}:{} (no GPU: {why})",
                at.file(),
                at.line()
            ));
            return None;
        }
        Some(Cuda::open().expect("the probe found a device, but it does not open"))
    }

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.0 = x;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
    }

    trait Gen: Elem {
        fn make(x: u64) -> Self;
    }
    impl Gen for u8 {
        fn make(x: u64) -> u8 {
            x as u8
        }
    }
    impl Gen for u32 {
        fn make(x: u64) -> u32 {
            x as u32
        }
    }
    impl Gen for u64 {
        fn make(x: u64) -> u64 {
            x
        }
    }

    fn sizes() -> Vec<usize> {
        vec![
            0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 2047, 2048, 2049, 4095, 4096, 4097, 8193,
            65_537, 1_000_003, 4_194_309,
        ]
    }

    /// 4098 scan tiles: more than one pass of `scan_carries`.
    const BIG: usize = 4097 * 4096 + 5;

    fn rand_vec<T: Gen>(r: &mut Rng, n: usize, bits: u32) -> Vec<T> {
        (0..n)
            .map(|_| {
                T::make(if bits >= 64 {
                    r.next()
                } else {
                    r.next() >> (64 - bits)
                })
            })
            .collect()
    }

    fn flags(r: &mut Rng, n: usize, den: u64) -> Vec<u8> {
        (0..n).map(|_| u8::from(r.below(den) == 0)).collect()
    }

    fn up<B: Backend, T: Elem>(b: &B, v: &[T]) -> B::Buf<T> {
        b.upload(v.to_vec()).unwrap()
    }

    fn down<B: Backend, T: Elem>(b: &B, x: B::Buf<T>) -> Vec<T> {
        b.download(x).unwrap()
    }

    fn radix_case<K: Word + Gen, V: Gen>(g: &Cuda, r: &mut Rng, n: usize, bits: u32) {
        let keys: Vec<K> = rand_vec(r, n, bits);
        let vals: Vec<V> = rand_vec(r, n, 64);
        let (mut ck, mut cv) = (keys.clone(), vals.clone());
        Cpu.radix_sort_pairs(&mut ck, &mut cv, bits).unwrap();
        let (mut gk, mut gv) = (up(g, &keys), up(g, &vals));
        g.radix_sort_pairs(&mut gk, &mut gv, bits).unwrap();
        assert_eq!(down(g, gk), ck, "radix keys n={n} bits={bits}");
        assert_eq!(down(g, gv), cv, "radix vals n={n} bits={bits}");
    }

    #[test]
    fn radix_sort_matches_cpu() {
        let Some(g) = cuda() else { return };
        let mut r = Rng(7);
        for n in sizes() {
            for bits in [1, 3, 8, 11, 17, 32] {
                radix_case::<u32, u32>(&g, &mut r, n, bits);
            }
            for bits in [5, 40, 59, 64] {
                radix_case::<u64, u32>(&g, &mut r, n, bits);
                radix_case::<u64, u64>(&g, &mut r, n, bits);
            }
            radix_case::<u32, u8>(&g, &mut r, n, 16);
            radix_case::<u64, u8>(&g, &mut r, n, 16);
            radix_case::<u32, u64>(&g, &mut r, n, 32);
        }
    }

    fn scan_case<W: Word + Gen>(g: &Cuda, r: &mut Rng, n: usize) {
        let x: Vec<W> = rand_vec(r, n, W::BITS);
        let mut c = x.clone();
        let ct = Cpu.exclusive_scan(&mut c).unwrap();
        let mut d = up(g, &x);
        let gt = g.exclusive_scan(&mut d).unwrap();
        assert_eq!((down(g, d), gt), (c, ct), "exclusive scan n={n}");
        for den in [1, 2, 50, 5000, u64::MAX] {
            let heads = flags(r, n, den);
            let mut c = x.clone();
            Cpu.segmented_scan(&mut c, &heads).unwrap();
            let mut d = up(g, &x);
            g.segmented_scan(&mut d, &up(g, &heads)).unwrap();
            assert_eq!(down(g, d), c, "segmented scan n={n} den={den}");
        }
    }

    #[test]
    fn scans_match_cpu() {
        let Some(g) = cuda() else { return };
        let mut r = Rng(11);
        for n in sizes() {
            scan_case::<u32>(&g, &mut r, n);
            scan_case::<u64>(&g, &mut r, n);
        }
        // More tiles (4096 elements each) than one pass of the carry
        // scans' single block (4096 tiles): the carry crosses passes.
        scan_case::<u32>(&g, &mut r, BIG);
        compact_case::<u32>(&g, &mut r, BIG, 3);
    }

    fn compact_case<T: Gen>(g: &Cuda, r: &mut Rng, n: usize, den: u64) {
        let x: Vec<T> = rand_vec(r, n, 64);
        let keep = flags(r, n, den);
        let (dx, dk) = (up(g, &x), up(g, &keep));
        assert_eq!(
            down(g, g.compact(&dx, &dk).unwrap()),
            Cpu.compact(&x, &keep).unwrap()
        );
        assert_eq!(g.count(&dk).unwrap(), Cpu.count(&keep).unwrap());
        let ci: Vec<u32> = Cpu.compact_index(&keep).unwrap();
        assert_eq!(down(g, g.compact_index::<u32>(&dk).unwrap()), ci);
    }

    #[test]
    fn compact_gather_scatter_match_cpu() {
        let Some(g) = cuda() else { return };
        let mut r = Rng(13);
        for n in sizes() {
            for den in [1, 2, 7, 1000, u64::MAX] {
                compact_case::<u8>(&g, &mut r, n, den);
                compact_case::<u32>(&g, &mut r, n, den);
                compact_case::<u64>(&g, &mut r, n, den);
            }
            let src: Vec<u64> = rand_vec(&mut r, n, 64);
            let mut perm: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                perm.swap(i, r.below(i as u64 + 1) as usize);
            }
            let (ds, dp) = (up(&g, &src), up(&g, &perm));
            assert_eq!(
                down(&g, g.gather(&ds, &dp).unwrap()),
                Cpu.gather(&src, &perm).unwrap()
            );
            let mut cdst = vec![0u64; n];
            Cpu.scatter(&src, &perm, &mut cdst).unwrap();
            let mut gdst = g.zeros::<u64>(n).unwrap();
            g.scatter(&ds, &dp, &mut gdst).unwrap();
            assert_eq!(down(&g, gdst), cdst, "scatter n={n}");
        }
    }

    #[test]
    fn maps_match_cpu() {
        let Some(g) = cuda() else { return };
        let mut r = Rng(17);
        for n in sizes() {
            let text: Vec<u8> = (0..n).map(|_| r.below(4) as u8).collect();
            let cp = Cpu.pack_text(&text).unwrap();
            let gp = g.pack_text(&text).unwrap();
            assert_eq!(down(&g, g.copy(&gp).unwrap()), cp, "pack n={n}");
            let nn = n as u64;
            let pos: Vec<u32> = (0..n as u32).rev().collect();
            let dpos = up(&g, &pos);
            for k in [1, 12, 27] {
                let ck: Vec<u64> = Cpu.text_keys(&cp, nn, &pos, k).unwrap();
                assert_eq!(
                    down(&g, g.text_keys::<u64, u32>(&gp, nn, &dpos, k).unwrap()),
                    ck
                );
                assert_eq!(
                    down(&g, g.text_heads(&gp, nn, &dpos, k).unwrap()),
                    Cpu.text_heads(&cp, nn, &pos, k).unwrap()
                );
            }
            let mut cpos: Vec<u32> = (0..n as u32).collect();
            let ch = Cpu.sort_suffixes(&cp, nn, &mut cpos, 27).unwrap();
            let mut gpos = up(&g, &(0..n as u32).collect::<Vec<_>>());
            let gh = g.sort_suffixes(&gp, nn, &mut gpos, 27).unwrap();
            assert_eq!(
                (down(&g, gpos), down(&g, gh)),
                (cpos, ch),
                "sort_suffixes n={n}"
            );
            let heads = flags(&mut r, n, 5);
            let dh = up(&g, &heads);
            assert_eq!(
                down(&g, g.unsorted(&dh).unwrap()),
                Cpu.unsorted(&heads).unwrap()
            );
            let cl: Vec<u32> = Cpu.segment_lengths(&heads).unwrap();
            if heads.first() == Some(&1) {
                assert_eq!(down(&g, g.segment_lengths::<u32>(&dh).unwrap()), cl);
            }
            let ci: Vec<u64> = Cpu.head_index(&heads, 3).unwrap();
            assert_eq!(down(&g, g.head_index::<u64>(&dh, 3).unwrap()), ci);
            let x: Vec<u32> = rand_vec(&mut r, n, 20);
            let dx = up(&g, &x);
            assert_eq!(
                down(&g, g.head_flags(&dx, Some(&dh)).unwrap()),
                Cpu.head_flags(&x, Some(&heads)).unwrap()
            );
            assert_eq!(
                down(&g, g.head_flags(&dx, None).unwrap()),
                Cpu.head_flags(&x, None).unwrap()
            );
            assert_eq!(
                down(&g, g.in_range(&dx, 100, 1 << 19).unwrap()),
                Cpu.in_range(&x, 100, 1 << 19).unwrap()
            );
            assert_eq!(
                down(&g, g.mod3_is(&dx, 2).unwrap()),
                Cpu.mod3_is(&x, 2).unwrap()
            );
            let cw: Vec<u64> = Cpu.widen(&heads).unwrap();
            assert_eq!(down(&g, g.widen::<u64>(&dh).unwrap()), cw);
            let mut cx = x.clone();
            Cpu.add_flags(&mut cx, &heads).unwrap();
            Cpu.sub_const(&mut cx, 5).unwrap();
            let mut gx = up(&g, &x);
            g.add_flags(&mut gx, &dh).unwrap();
            g.sub_const(&mut gx, 5).unwrap();
            assert_eq!(down(&g, gx), cx);
            assert_eq!(
                down(&g, g.head_values(&dh, &dx, 1).unwrap()),
                Cpu.head_values(&heads, &x, 1).unwrap()
            );
            for seq in [Iota::From(5), Iota::Mod3NonZero] {
                let c: Vec<u32> = Cpu.iota(n, seq).unwrap();
                assert_eq!(down(&g, g.iota::<u32>(n, seq).unwrap()), c);
            }
            assert_eq!(
                down(&g, g.fill::<u64>(n, 9).unwrap()),
                Cpu.fill::<u64>(n, 9).unwrap()
            );
            let cs: Vec<u32> = Cpu.symbols(&cp, nn).unwrap();
            assert_eq!(down(&g, g.symbols::<u32>(&gp, nn).unwrap()), cs);
            // Rank layouts: positions p % 3 != 0 of a text of n bases.
            let m3: Vec<u32> = Cpu.iota(n - n / 3, Iota::Mod3NonZero).unwrap();
            let m3: Vec<u32> = m3.into_iter().filter(|&p| (p as usize) < n).collect();
            let n0 = nn.div_ceil(3);
            for layout in [RankLayout::Interleaved, RankLayout::Split { n0 }] {
                let dm = up(&g, &m3);
                assert_eq!(
                    down(&g, g.slots(&dm, layout).unwrap()),
                    Cpu.slots(&m3, layout).unwrap()
                );
                let ranks: Vec<u32> = rand_vec(&mut r, 2 * n0 as usize + 2, 32);
                let dr = up(&g, &ranks);
                for h in [1, 2, 3, 27] {
                    assert_eq!(
                        down(&g, g.fetch(&dr, layout, &dm, h, nn).unwrap()),
                        Cpu.fetch(&ranks, layout, &m3, h, nn).unwrap(),
                        "fetch n={n} h={h} {layout:?}"
                    );
                }
                let mut cd = vec![0u32; 2 * n0 as usize + 2];
                Cpu.scatter_slots(&m3, &m3, layout, &mut cd).unwrap();
                let mut gd = g.zeros::<u32>(2 * n0 as usize + 2).unwrap();
                g.scatter_slots(&dm, &dm, layout, &mut gd).unwrap();
                assert_eq!(down(&g, gd), cd);
            }
            // Skew's fused triples over symbols of 14 bits.
            let sym: Vec<u32> = rand_vec(&mut r, n, 14);
            let pos: Vec<u32> = (0..n as u32 + 3).rev().collect();
            assert_eq!(
                down(
                    &g,
                    g.triple_keys::<u64, u32>(&up(&g, &sym), &up(&g, &pos), nn, 14)
                        .unwrap()
                ),
                Cpu.triple_keys::<u64, u32>(&sym, &pos, nn, 14).unwrap(),
                "triple_keys n={n}"
            );
            let small: Vec<u32> = rand_vec(&mut r, n, 10);
            assert_eq!(
                down(
                    &g,
                    g.triple_keys::<u32, u32>(&up(&g, &small), &up(&g, &pos), nn, 10)
                        .unwrap()
                ),
                Cpu.triple_keys::<u32, u32>(&small, &pos, nn, 10).unwrap(),
                "triple_keys u32 n={n}"
            );
            let sl: Vec<u32> = (0..(2 * n0) as u32).collect();
            assert_eq!(
                down(&g, g.split_positions(&up(&g, &sl), n0).unwrap()),
                Cpu.split_positions(&sl, n0).unwrap()
            );
        }
    }

    #[test]
    fn segmented_sort_matches_cpu() {
        let Some(g) = cuda() else { return };
        let mut r = Rng(19);
        for n in sizes() {
            // Values ascend within segments, as in the algorithms (see cuda.rs).
            let vals: Vec<u32> = (0..n as u32).collect();
            for (what, heads) in [
                (
                    "one segment",
                    (0..n).map(|i| u8::from(i == 0)).collect::<Vec<u8>>(),
                ),
                ("singletons", vec![1u8; n]),
                ("random", {
                    let mut h = flags(&mut r, n, 40);
                    if let Some(f) = h.first_mut() {
                        *f = 1;
                    }
                    h
                }),
            ] {
                for bits in [2, 32] {
                    let keys: Vec<u32> = rand_vec(&mut r, n, bits);
                    let (mut ck, mut cv) = (keys.clone(), vals.clone());
                    Cpu.segmented_sort(&heads, &mut ck, &mut cv, 4096).unwrap();
                    let (mut gk, mut gv) = (up(&g, &keys), up(&g, &vals));
                    g.segmented_sort(&up(&g, &heads), &mut gk, &mut gv, 4096)
                        .unwrap();
                    assert_eq!(down(&g, gk), ck, "segmented sort keys n={n} {what}");
                    assert_eq!(down(&g, gv), cv, "segmented sort vals n={n} {what}");
                }
            }
        }
    }

    #[test]
    fn merge_matches_cpu() {
        let Some(g) = cuda() else { return };
        let mut r = Rng(23);
        for n in sizes() {
            let split = r.below(n as u64 + 1) as usize;
            let mut a: Vec<u32> = rand_vec(&mut r, split, 12);
            let mut b: Vec<u32> = rand_vec(&mut r, n - split, 12);
            a.sort();
            b.sort();
            let c = Cpu.merge(&a, &b, &Order::Ascending).unwrap();
            let d = g
                .merge(&up(&g, &a), &up(&g, &b), &Order::Ascending)
                .unwrap();
            assert_eq!(down(&g, d), c, "merge n={n}");
        }
    }

    fn texts() -> Vec<(String, Vec<u8>)> {
        let mut r = Rng(29);
        let mut t = Vec::new();
        for n in [2usize, 3, 4, 5, 100, 4097, 100_003, 1_000_000] {
            t.push((
                format!("random {n}"),
                (0..n).map(|_| r.below(4) as u8).collect(),
            ));
        }
        t.push(("all A 200000".into(), vec![0u8; 200_000]));
        let unit: Vec<u8> = (0..171).map(|_| r.below(4) as u8).collect();
        t.push((
            "tandem 171 x 2000".into(),
            unit.iter().copied().cycle().take(342_000).collect(),
        ));
        // A satellite array inside random sequence: the hybrid's doubling
        // stalls after a round over the array alone, which it recurses on.
        let mut sat: Vec<u8> = (0..300_000).map(|_| r.below(4) as u8).collect();
        sat.extend(unit.iter().copied().cycle().take(60_000));
        sat.extend((0..100_000).map(|_| r.below(4) as u8));
        t.push(("satellite 60000 in random 460000".into(), sat));
        for name in ["lambda_virus.fa", "human_chrM_NC_012920.fa"] {
            let path = std::env::var_os("FMALIGN_SHARED_DATA")
                .map(std::path::PathBuf::from)
                .unwrap_or_else(|| {
                    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data")
                })
                .join(name);
            if let Ok(r) = fmalign::scan::read_fasta(&path) {
                t.push((name.into(), r.text));
            }
        }
        t
    }

    /// Exact mapping on the device against the CPU: intervals of real and
    /// random reads (with N, empty, both strands) and the located rows, on
    /// narrow and wide indexes; then the binary's SAM, --device gpu against
    /// --device cpu.
    #[test]
    fn mapping_matches_cpu() {
        let Some(_g) = cuda() else { return };
        use fmalign::index::{IndexConfig, build_in_memory};
        use fmalign::kmer::KmerTable;
        for (what, text) in texts().into_iter().skip(4) {
            let mut fa = b">t\n".to_vec();
            fa.extend(text.iter().map(|&c| b"ACGT"[c as usize]));
            fa.push(b'\n');
            for wide in [false, true] {
                let r =
                    fmalign::scan::read_fasta_from(&fa[..], std::path::Path::new("t.fa")).unwrap();
                let cfg = IndexConfig {
                    threads: 2,
                    wide,
                    ..IndexConfig::default()
                };
                let index = build_in_memory(r, &cfg).unwrap();
                let fm = index.fm();
                let dev = fmalign::map::cuda::DeviceIndex::upload(&index)
                    .unwrap()
                    .with_pac(&index)
                    .unwrap()
                    .with_rev(&index)
                    .unwrap();
                let mut r = Rng(31);
                let mut reads: Vec<Vec<u8>> = (0..2000)
                    .map(|_| {
                        let len = 1 + r.below(120) as usize;
                        let at = r.below((text.len() - len.min(text.len()) + 1) as u64) as usize;
                        text[at..(at + len).min(text.len())]
                            .iter()
                            .map(|&c| b"ACGT"[c as usize])
                            .collect()
                    })
                    .collect();
                reads.push(Vec::new());
                reads.push(b"ACGNT".to_vec());
                let seqs: Vec<&[u8]> = reads.iter().map(|v| v.as_slice()).collect();
                let (want, _) = fmalign::map::search_intervals(&fm, &KmerTable::new(&fm, 0), &seqs);
                let got = dev.exact(&seqs).unwrap();
                assert!(got == want, "{what}: device intervals differ");
                let got = dev.exact_batch(&seqs).unwrap();
                assert!(got == want, "{what}: packed batch intervals differ");
                let rows: Vec<u64> = (0..=fm.n).step_by(7).collect();
                let want: Vec<u64> = rows.iter().map(|&i| fm.locate(i)).collect();
                assert_eq!(dev.locate(&rows).unwrap(), want, "{what}: device locate");
                // -v K: seeds searched, located and verified on the device,
                // against the CPU's seed and verify (reads with mutations).
                use fmalign::search::{BiIndex, search_verify_many, search_verify_with};
                let bi = BiIndex {
                    fwd: index.fm(),
                    rev: index.rev_fm(),
                };
                let codes: Vec<Vec<u8>> = reads
                    .iter()
                    .map(|read| {
                        let mut c: Vec<u8> = read.iter().map(|&b| fmalign::dna::code(b)).collect();
                        for _ in 0..r.below(4) {
                            if !c.is_empty() {
                                let i = r.below(c.len() as u64) as usize;
                                c[i] = (c[i] + 1 + r.below(3) as u8) % 4;
                            }
                        }
                        c
                    })
                    .collect();
                let patterns: Vec<&[u8]> = codes.iter().map(|c| c.as_slice()).collect();
                for k in 1..=3 {
                    // verify_max 0: every seed runs its search of the scheme
                    // (map_scheme on the device); 8: the CPU's default mix.
                    for verify_max in [8, 0] {
                        let want =
                            search_verify_many(&bi, index.pac(), &patterns, k, verify_max, 64);
                        let got = search_verify_with(&dev, &bi, &patterns, k, verify_max).unwrap();
                        assert!(
                            got == want,
                            "{what}: -v {k} seed and verify (verify_max {verify_max}) differ"
                        );
                    }
                    // Every search of every pattern long enough, job by job.
                    use fmalign::search::{OnCpu, SeedEngine};
                    let jobs: Vec<(u32, u8)> = patterns
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| p.len() > usize::from(k))
                        .flat_map(|(q, _)| (0..=k).map(move |i| (q as u32, i)))
                        .collect();
                    let cpu = OnCpu {
                        fm: &bi.fwd,
                        pac: index.pac(),
                        lanes: 64,
                    };
                    let sorted = |v: Vec<Vec<fmalign::search::Found>>| -> Vec<_> {
                        v.into_iter()
                            .map(|mut f| {
                                f.sort_unstable();
                                f
                            })
                            .collect()
                    };
                    let want = sorted(cpu.schemes(&bi, &patterns, &jobs, k).unwrap());
                    let got = sorted(dev.schemes(&bi, &patterns, &jobs, k).unwrap());
                    assert!(
                        got == want,
                        "{what}: -v {k} map_scheme differs from the CPU's schemes"
                    );
                }
            }
        }
    }

    /// The batched search across sub-batches: 2.5 sub-batches of reads
    /// (both slots used, then reused, the last one partial), as the CPU.
    #[test]
    fn exact_batch_across_sub_batches_matches_cpu() {
        let Some(_g) = cuda() else { return };
        use fmalign::index::{IndexConfig, build_in_memory};
        use fmalign::kmer::KmerTable;
        use fmalign::map::cuda::SUB_READS;
        let mut r = Rng(41);
        let text: Vec<u8> = (0..100_000).map(|_| b"ACGT"[r.below(4) as usize]).collect();
        let mut fa = b">t\n".to_vec();
        fa.extend_from_slice(&text);
        fa.push(b'\n');
        let reference =
            fmalign::scan::read_fasta_from(&fa[..], std::path::Path::new("t.fa")).unwrap();
        let index = build_in_memory(reference, &IndexConfig::default()).unwrap();
        let fm = index.fm();
        let dev = fmalign::map::cuda::DeviceIndex::upload(&index).unwrap();
        let reads: Vec<Vec<u8>> = (0..SUB_READS * 5 / 2)
            .map(|q| {
                let len = 1 + r.below(if q % 100 == 0 { 200 } else { 40 }) as usize;
                let at = r.below((text.len() - len) as u64) as usize;
                let mut read = text[at..at + len].to_vec();
                if q % 13 == 0 {
                    read[len / 2] = b'N';
                }
                read
            })
            .collect();
        let seqs: Vec<&[u8]> = reads.iter().map(|v| v.as_slice()).collect();
        let (want, _) = fmalign::map::search_intervals(&fm, &KmerTable::new(&fm, 0), &seqs);
        for _ in 0..2 {
            let got = dev.exact_batch(&seqs).unwrap();
            let bad = got.iter().zip(&want).filter(|(g, w)| g != w).count();
            assert_eq!(bad, 0, "{bad} of {} reads differ", seqs.len());
        }
        // Starting from a k-mer table on the device: the same intervals.
        let dev = dev.with_kmer(&KmerTable::new(&fm, 10)).unwrap();
        let got = dev.exact_batch(&seqs).unwrap();
        let bad = got.iter().zip(&want).filter(|(g, w)| g != w).count();
        assert_eq!(bad, 0, "--kmer 10: {bad} of {} reads differ", seqs.len());
    }

    /// The binary: `map --device gpu` writes the SAM of `--device cpu`
    /// (header lines other than @PG included), for any batch size.
    #[test]
    fn map_device_gpu_writes_the_cpu_sam() {
        let Some(_g) = cuda() else { return };
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let mut r = Rng(37);
        let text: Vec<u8> = (0..200_000).map(|_| b"ACGT"[r.below(4) as usize]).collect();
        let mut fa = b">a\n".to_vec();
        fa.extend_from_slice(&text[..150_000]);
        fa.extend_from_slice(b"\nNNNN\n>b\n");
        fa.extend_from_slice(&text[100_000..]);
        fa.push(b'\n');
        std::fs::write(d.join("ref.fa"), &fa).unwrap();
        let mut fq = Vec::new();
        for q in 0..5000 {
            let at = r.below(190_000) as usize;
            let mut read = text[at..at + 100].to_vec();
            if q % 7 == 0 {
                read[50] = b'N';
            }
            fq.extend_from_slice(format!("@r{q}\n").as_bytes());
            fq.extend_from_slice(&read);
            fq.extend_from_slice(b"\n+\n");
            fq.extend(std::iter::repeat_n(b'I', 100));
            fq.push(b'\n');
        }
        std::fs::write(d.join("r.fq"), &fq).unwrap();
        let run = |args: &[&str]| {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_fmalign"))
                .current_dir(d)
                .args(args)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with("@PG"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        // A GPU run: the SAM, after checking that the device mapped the
        // reads (a batch the device failed on is mapped on the CPU, the
        // same SAM: that must not pass for a GPU run). Without -q, whose
        // notices and summary line say where the reads were mapped.
        let run_gpu = |args: &[&str]| {
            let args: Vec<&str> = args.iter().copied().filter(|&a| a != "-q").collect();
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_fmalign"))
                .current_dir(d)
                .args(&args)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{args:?}: {err}");
            assert!(
                err.contains("reads/s (gpu)") && !err.contains("GPU failed"),
                "{args:?} did not map on the GPU:\n{err}"
            );
            String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .filter(|l| !l.starts_with("@PG"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        run(&["index", "-q", "--device", "cpu", "ref.fa"]);
        let cpu = run(&[
            "map", "-q", "--device", "cpu", "-v", "0", "-a", "ref.fa", "r.fq",
        ]);
        for batch in ["1000", "10000000"] {
            let gpu = run_gpu(&[
                "map", "-q", "--device", "gpu", "-v", "0", "-a", "-K", batch, "ref.fa", "r.fq",
            ]);
            assert!(
                gpu == cpu,
                "--device gpu -K {batch}: SAM differs from the CPU's"
            );
        }
        // Pairs (the device searches both mates' lists in one pass), and
        // the default batch size with --max-locate in play.
        let mut fq2 = Vec::new();
        for q in 0..5000 {
            let at = r.below(190_000) as usize;
            let read: Vec<u8> =
                fmalign::dna::reverse_complement_ascii(&text[at..at + 100]).collect();
            fq2.extend_from_slice(format!("@r{q}\n").as_bytes());
            fq2.extend_from_slice(&read);
            fq2.extend_from_slice(b"\n+\n");
            fq2.extend(std::iter::repeat_n(b'I', 100));
            fq2.push(b'\n');
        }
        std::fs::write(d.join("r2.fq"), &fq2).unwrap();
        let cpu = run(&[
            "map", "-q", "--device", "cpu", "-v", "0", "ref.fa", "r.fq", "r2.fq",
        ]);
        for batch in [&["-K", "3000"][..], &[][..]] {
            let mut args = vec![
                "map", "-q", "--device", "gpu", "-v", "0", "ref.fa", "r.fq", "r2.fq",
            ];
            args.extend_from_slice(batch);
            assert!(
                run_gpu(&args) == cpu,
                "{args:?}: pairs' SAM differs from the CPU's"
            );
        }
        let gpu = run_gpu(&[
            "map", "-q", "--device", "gpu", "-v", "0", "--kmer", "8", "ref.fa", "r.fq", "r2.fq",
        ]);
        assert!(gpu == cpu, "--kmer 8 on the device: SAM differs");
        // -v K on the device (seeds, locate, verification), single and pairs.
        for k in ["1", "3"] {
            for files in [&["r.fq"][..], &["r.fq", "r2.fq"][..]] {
                let mut cpu_args = vec!["map", "-q", "--device", "cpu", "-v", k, "ref.fa"];
                cpu_args.extend_from_slice(files);
                let mut gpu_args = cpu_args.clone();
                gpu_args[3] = "gpu";
                assert!(
                    run_gpu(&gpu_args) == run(&cpu_args),
                    "{gpu_args:?}: SAM differs"
                );
            }
        }
    }

    #[test]
    fn algorithms_match_cpu() {
        let Some(g) = cuda() else { return };
        for (what, text) in texts() {
            let n = text.len() as u64;
            let want: Vec<u64> = sa::suffix_array::<u32>(&text, SaAlgorithm::Libsais, 2)
                .unwrap()
                .as_slice()
                .iter()
                .map(|&p| u64::from(p))
                .collect();
            let gp = g.pack_text(&text).unwrap();
            for algo in [SaAlgorithm::Hybrid, SaAlgorithm::Skew, SaAlgorithm::Ls] {
                let got: Vec<u32> = down(
                    &g,
                    match algo {
                        SaAlgorithm::Hybrid => sa::hybrid::suffix_array(&g, &gp, n, &mut |_| ()),
                        SaAlgorithm::Skew => sa::skew::suffix_array(&g, &gp, n, &mut |_| ()),
                        _ => sa::ls::suffix_array(&g, &gp, n, &mut |_| ()),
                    }
                    .unwrap(),
                );
                let got: Vec<u64> = got.into_iter().map(u64::from).collect();
                assert!(
                    got == want,
                    "{what}: {algo:?} on the GPU differs from libsais"
                );
            }
        }
    }

    /// `fmalign index ARGS -p DIR/OUT test_data/lambda_virus.fa`, which must
    /// succeed: its stderr and the file.
    fn index_lambda(dir: &tempfile::TempDir, args: &[&str], out: &str) -> (String, Vec<u8>) {
        let fa = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data/lambda_virus.fa");
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_fmalign"))
            .arg("index")
            .args(args)
            .arg("-p")
            .arg(dir.path().join(out))
            .arg(&fa)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        (
            String::from_utf8_lossy(&o.stderr).into_owned(),
            std::fs::read(dir.path().join(out)).unwrap(),
        )
    }

    /// The storage plan: the device memory the buffers of each algorithm
    /// hold at their peak stays within `sa::gpu_bytes_per_base` (the figure
    /// the build checks against free memory), on a random text and on the
    /// worst cases of prefix doubling; the tables equal the CPU's.
    #[test]
    fn device_memory_stays_within_the_plan() {
        let Some(_g) = cuda() else { return };
        let mut r = Rng(43);
        let n = 3_000_000;
        let random: Vec<u8> = (0..n).map(|_| r.below(4) as u8).collect();
        let unit: Vec<u8> = (0..1000).map(|_| r.below(4) as u8).collect();
        let tandem: Vec<u8> = unit.iter().copied().cycle().take(n).collect();
        for (what, text) in [
            ("random", random),
            ("all-A", vec![0u8; n]),
            ("tandem", tandem),
        ] {
            for algorithm in [SaAlgorithm::Hybrid, SaAlgorithm::Skew, SaAlgorithm::Ls] {
                let (parts, peak) =
                    fmalign::tables::fm_on_gpu::<u32>(&text, algorithm, 5, None, &mut |_| {})
                        .unwrap();
                let plan = sa::gpu_bytes_per_base(4, algorithm);
                let per_base = peak as f64 / n as f64;
                eprintln!(
                    "device peak {what} {algorithm:?}: {per_base:.2} bytes per base (plan {plan})"
                );
                assert!(
                    per_base <= plan as f64,
                    "{what} {algorithm:?}: {per_base:.2} bytes per base, plan {plan}"
                );
                let sa = sa::suffix_array::<u32>(&text, SaAlgorithm::Libsais, 2).unwrap();
                let cpu = fmalign::tables::fm_from_sa::<u32>(&text, sa.as_slice(), 5);
                assert!(
                    parts.occ == cpu.occ && parts.ssa == cpu.ssa,
                    "{what} {algorithm:?}"
                );
            }
        }
    }

    /// `--max-gpu-memory` below the estimate: a one-line notice and the CPU
    /// build, the same bytes; a generous one: the GPU build, the same bytes.
    #[test]
    fn max_gpu_memory_falls_back_to_the_cpu() {
        if cuda().is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let run = |extra: &[&str], out: &str| {
            index_lambda(
                &dir,
                &[&["--device", "gpu", "--sa", "hybrid"], extra].concat(),
                out,
            )
        };
        let (small, a) = run(&["--max-gpu-memory", "1K"], "a.fmi");
        assert!(
            small.contains("--max-gpu-memory") && small.contains("(cpu)"),
            "{small}"
        );
        let (big, b) = run(&["--max-gpu-memory", "100G"], "b.fmi");
        assert!(big.contains("(gpu)"), "{big}");
        assert!(a == b, "the GPU and CPU builds differ");
    }

    /// The sort of a part on the device's steps (`sa::partsort`) against
    /// the CPU backend's and libsais: whole texts and every third suffix,
    /// several difference-cover periods.
    #[test]
    fn parts_sort_on_the_gpu_like_the_cpu() {
        use fmalign::dna::PackedText;
        use fmalign::sa::blockwise::DcSample;
        use fmalign::sa::partsort::Uploaded;
        let Some(g) = cuda() else { return };
        for (what, text) in texts() {
            let want: Vec<u64> = sa::suffix_array::<u32>(&text, SaAlgorithm::Libsais, 2)
                .unwrap()
                .as_slice()
                .iter()
                .map(|&p| u64::from(p))
                .collect();
            let t = PackedText::from_codes(&text);
            for v in [16, 256] {
                let sample = DcSample::new(&t, v).unwrap();
                let on_gpu = Uploaded::new(&g, &t, &sample).unwrap();
                let on_cpu = Uploaded::new(&Cpu, &t, &sample).unwrap();
                for every in [1, 3] {
                    let part: Vec<u64> = want.iter().copied().filter(|p| p % every == 0).collect();
                    // Scrambled: reversed, then odd indices first.
                    let mut input: Vec<u64> = part.iter().rev().copied().collect();
                    input.sort_by_key(|&p| p % 2 == 0);
                    let mut d = up(&g, &input);
                    on_gpu.sort(&g, &mut d).unwrap();
                    let got = down(&g, d);
                    let mut c = input.clone();
                    on_cpu.sort(&Cpu, &mut c).unwrap();
                    assert!(
                        c == part,
                        "{what}: v {v}, every {every}: the CPU steps differ"
                    );
                    assert!(got == part, "{what}: v {v}, every {every}: the GPU differs");
                }
            }
        }
    }

    /// `fmalign index` in parts with `--device gpu` sorts them there (a
    /// notice says how many) and writes the CPU's bytes; with too little
    /// device memory allowed, the CPU sorts them, the same bytes.
    #[test]
    fn index_in_parts_on_the_gpu() {
        if cuda().is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let run = |extra: &[&str], out: &str| {
            index_lambda(
                &dir,
                &[&["--max-part", "3000", "--dcv", "64"], extra].concat(),
                out,
            )
        };
        let (_, cpu) = run(&["--device", "cpu"], "cpu.fmi");
        let (log, gpu) = run(&["--device", "gpu"], "gpu.fmi");
        assert!(log.contains("parts sorted on the GPU"), "{log}");
        assert!(gpu == cpu, "the parts sorted on the GPU give other bytes");
        let (log, small) = run(&["--device", "gpu", "--max-gpu-memory", "1K"], "small.fmi");
        assert!(log.contains("sorting the parts on the CPU"), "{log}");
        assert!(small == cpu, "the fallback gives other bytes");
    }
}
