//! The crash torture (see `torture/mod.rs` for what a round does and
//! checks): random mixes of DDL, bulk loads, DML, VACUUM and CHECKPOINT
//! with `synchronous_commit` on and off, killed with SIGKILL at random
//! moments, reopened and checked against a model.
//!
//! The child is this test binary itself, run with `--exact torture_child
//! --ignored`. Rounds: `HEAPDB_TORTURE_ROUNDS` (default 30, two kills
//! each); one seed: `HEAPDB_TORTURE_SEED` (printed by a failure). For long
//! runs: `cargo run --release --example crash_torture -- --rounds 1000`.

mod torture;

use std::process::Command;

#[test]
#[ignore = "the torture harness runs this as its child process"]
fn torture_child() {
    torture::child_main();
}

#[test]
fn random_ddl_and_dml_survive_kills() {
    let rounds = torture::rounds_from_env(30);
    let base = torture::temp_base();
    let child = || {
        let mut c = Command::new(std::env::current_exe().expect("test binary"));
        c.args([
            "--exact",
            "torture_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ]);
        c
    };
    let verbose = std::env::var_os("HEAPDB_TORTURE_VERBOSE").is_some();
    let mut acked = 0;
    for seed in torture::seeds(23, rounds) {
        match torture::round(seed, 2, base.path(), &child, verbose) {
            Ok(st) => acked += st.statements_acked,
            Err(e) => panic!("{e}\n(rerun: HEAPDB_TORTURE_SEED={seed})"),
        }
    }
    assert!(acked > 0, "no statement was ever acknowledged");
}
