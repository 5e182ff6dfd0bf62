//! The library's modules import one way, in data-flow order.
//!
//! Every `crate::…` path in `src/` outside `#[cfg(test)]` modules and
//! comments is an edge from the module of its file to the module it names
//! (a directory module such as `sa/` is one module). [`LAYERS`] lists the
//! modules from the bottom up; a module may use only modules below it. A new
//! module fails this test until it is given its place here, which is also
//! docs/ARCHITECTURE.md's picture of the crate.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Bottom to top. A module may import any module listed before it.
const LAYERS: &[&str] = &[
    // Foundations: errors, memory figures, the option enums' home.
    "error",
    "alloc",
    "mem",
    "device",
    // The DNA alphabet and 2-bit packing; the read and hit records.
    "dna",
    "read",
    // Input and output files: decompression, outputs written safely,
    // FASTQ reads in batches.
    "io",
    // The FM-index over borrowed tables.
    "fm",
    // The reference.
    "reference",
    "segments",
    "scan",
    // The GPU runtime (probe, NVRTC, context).
    "gpu",
    // Suffix arrays, then the FM tables built from them.
    "sa",
    "tables",
    // The index file: written, opened, checked; the distributed build.
    "index",
    "dist",
    "check",
    // Mapping: reads, pairs and SAM records beside the search (neither
    // knows the other), then the pipeline over them.
    "pair",
    // Affine-gap extension (CIGAR, NM, MD), below the records it fills.
    "align",
    "sam",
    "kmer",
    "search",
    // Seeds and chains for gapped alignment.
    "seed",
    "map",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`sa/cpu/radix.rs` → `sa`); `None` for
/// the crate root and the binary (`main.rs`, `cli.rs`).
fn module_of(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src()).unwrap();
    let first = rel.components().next()?.as_os_str().to_str()?.to_owned();
    let name = first.trim_end_matches(".rs").to_owned();
    (name != "lib" && name != "main" && name != "cli").then_some(name)
}

/// The code of a file without comments and without its `#[cfg(test)]`
/// modules (which sit at the end of each file).
fn production_code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod "))
        {
            break;
        }
        let code = match t.find("//") {
            Some(i) => &t[..i],
            None => t,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The first segments of every `crate::` path: `crate::fm::X` gives `fm`,
/// `crate::{fm::X, sa}` gives `fm` and `sa`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let bytes = code.as_bytes();
    let mut from = 0;
    while let Some(i) = code[from..].find("crate::") {
        let start = from + i + "crate::".len();
        from = start;
        let before = code[..from - "crate::".len()].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `fmalign_crate::` and the like
        }
        if bytes.get(start) == Some(&b'{') {
            // A group: split its top level at commas.
            let (mut depth, mut item) = (0, String::new());
            for c in code[start + 1..].chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.insert(first_segment(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
            names.insert(first_segment(&item));
        } else {
            names.insert(first_segment(&code[start..]));
        }
    }
    names.remove("");
    names
}

fn first_segment(path: &str) -> String {
    path.trim()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

#[test]
fn crate_paths_are_read_as_written() {
    let code = "use crate::{fm::{A, B}, sa, error::Result};\nlet x = crate::tables::pack(t);\nfmalign_crate::x; crate::Choice";
    let got: Vec<String> = crate_paths(code).into_iter().collect();
    assert_eq!(got, ["Choice", "error", "fm", "sa", "tables"]);
    let code = "#[cfg(test)]\nmod tests {\n use crate::map;\n}\n";
    assert!(crate_paths(&production_code(code)).is_empty());
    assert_eq!(
        production_code("let a = 1; // crate::map\n/// [`crate::sa`]\n"),
        "let a = 1; \n\n"
    );
}

#[test]
fn modules_import_one_way_in_data_flow_order() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(f)).collect();
    let unplaced: Vec<&String> = modules
        .iter()
        .filter(|m| !LAYERS.contains(&m.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "modules missing from LAYERS in tests/layers.rs: {unplaced:?}"
    );
    let gone: Vec<&&str> = LAYERS.iter().filter(|l| !modules.contains(**l)).collect();
    assert!(
        gone.is_empty(),
        "LAYERS lists modules that do not exist: {gone:?}"
    );
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut wrong = Vec::new();
    for file in &files {
        let Some(from) = module_of(file) else {
            continue;
        };
        let code = production_code(&std::fs::read_to_string(file).unwrap());
        for to in crate_paths(&code) {
            // Items of the crate root (`crate::Choice`, `crate::thread_pool`)
            // sit below every module.
            let Some(to_rank) = rank(&to) else { continue };
            if to != from && to_rank > rank(&from).unwrap() {
                let rel = file.strip_prefix(src()).unwrap().display().to_string();
                wrong.push(format!("{rel}: {from} uses {to}, which is above it"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

/// The rooms of `src/map/`, bottom to top: a file may use (`super::x`) only
/// the files before it; `mod.rs`, the pipeline, sits above them all. A room
/// may be a folder (`record/`: its `mod.rs` is the room's file, its parts
/// below it).
const MAP_ROOMS: &[&str] = &[
    "cuda", "summary", "config", "record", "output", "find", "extend", "select", "mates", "batch",
    "ungapped", "gapped", "mapper",
];

/// Inside `map/` the files import one another by name, one way, and none
/// imports its parent by glob (`use super::*`), outside its tests.
#[test]
fn map_rooms_import_one_way_and_by_name() {
    let dir = src().join("map");
    let mut checked = 0;
    for (k, room) in MAP_ROOMS.iter().enumerate() {
        let file = dir.join(format!("{room}.rs"));
        let file = if file.exists() {
            file
        } else {
            dir.join(room).join("mod.rs")
        };
        let text = std::fs::read_to_string(file).unwrap();
        let code = production_code(&text);
        assert!(
            !code.contains("use super::*"),
            "map/{room}.rs imports its parent by glob"
        );
        let mut from = 0;
        while let Some(i) = code[from..].find("super::") {
            let name = first_segment(&code[from + i + "super::".len()..]);
            from += i + "super::".len();
            let at = MAP_ROOMS.iter().position(|r| *r == name);
            assert!(
                at.is_some_and(|a| a < k),
                "map/{room}.rs uses super::{name}, which is not a room below it ({MAP_ROOMS:?})"
            );
            checked += 1;
        }
    }
    assert!(checked > 10, "only {checked} imports found");
    // Every room is listed.
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            // A folder counts as its room's file.
            if e.path().is_dir() {
                format!("{name}.rs")
            } else {
                name
            }
        })
        .filter(|n| n != "mod.rs")
        .collect();
    files.sort();
    let mut listed: Vec<String> = MAP_ROOMS.iter().map(|r| format!("{r}.rs")).collect();
    listed.sort();
    assert_eq!(files, listed, "map/'s files and MAP_ROOMS differ");
}

/// The Python module (python/src, which names the library `fm`) is a shell
/// over the public API: it names no module of the library, only what
/// lib.rs re-exports, so Python cannot reach behaviour the API lacks.
#[test]
fn python_module_uses_only_the_api() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("python/src");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(!files.is_empty(), "no Rust files under {}", dir.display());
    let mut paths = 0;
    for f in files {
        let code = production_code(&std::fs::read_to_string(&f).unwrap());
        assert!(
            code.contains("use fmalign_core as fm;"),
            "{} does not name the library `fm`",
            f.display()
        );
        for prefix in ["fm::", "fmalign_core::"] {
            let mut from = 0;
            while let Some(i) = code[from..].find(prefix) {
                let at = from + i;
                from = at + prefix.len();
                let before = code[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let name = first_segment(&code[from..]);
                assert!(
                    !LAYERS.contains(&name.as_str()),
                    "{} uses the library's module {name} ({prefix}{name}::...): export what it needs from lib.rs",
                    f.display()
                );
                paths += 1;
            }
        }
    }
    assert!(paths > 10, "only {paths} library paths found");
}
