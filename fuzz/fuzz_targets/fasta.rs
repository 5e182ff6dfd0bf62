#![no_main]
//! cargo fuzz target: see fuzz/harness.rs.

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::fasta(data);
});
