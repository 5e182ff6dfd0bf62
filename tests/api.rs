//! The crate's API as its front page lists it, against the CLI: an index
//! built by `fmalign::build_index` is the same bytes as `fmalign index`
//! writes, and the FASTA named as the output is refused and left as it was.

mod common;

use common::*;

#[test]
fn build_index_writes_the_cli_bytes_and_never_the_fasta() {
    let dir = tempfile::tempdir().unwrap();
    let fasta = dir.path().join("ecoli.fa.gz");
    std::fs::copy(test_data("ecoli_K12_MG1655.fa.gz"), &fasta).unwrap();
    let before = std::fs::read(&fasta).unwrap();

    let cfg = fmalign::IndexConfig {
        threads: 2,
        ..fmalign::IndexConfig::default()
    };
    let lib = dir.path().join("lib.fmi");
    let report = fmalign::build_index(&fasta, &lib, &cfg).unwrap();
    assert_eq!(report.file_bytes, std::fs::metadata(&lib).unwrap().len());
    run_ok(
        dir.path(),
        &["index", "-t", "2", "ecoli.fa.gz", "-p", "cli.fmi"],
        None,
    );
    assert!(std::fs::read(&lib).unwrap() == std::fs::read(dir.path().join("cli.fmi")).unwrap());
    let index = fmalign::Index::open(&lib).unwrap();
    assert_eq!(index.layout.contigs.len(), 1);

    let e = fmalign::build_index(&fasta, &fasta, &cfg).unwrap_err();
    assert!(e.to_string().contains("the reference"), "{e}");
    assert!(std::fs::read(&fasta).unwrap() == before);
}
