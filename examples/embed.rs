//! Embedding heapdb: open a database, run statements, read rows.
//!
//! `cargo run --release --example embed [DATA_DIR]` (a temporary directory
//! when none is given).

use heapdb::types::value_to_string;
use heapdb::Database;

fn main() -> heapdb::Result<()> {
    let tmp;
    let dir = match std::env::args().nth(1) {
        Some(d) => std::path::PathBuf::from(d),
        None => {
            tmp = std::env::temp_dir().join(format!("heapdb-embed-{}", std::process::id()));
            tmp.clone()
        }
    };
    let db = Database::open(&dir)?;
    let mut session = db.session();
    session.execute(
        "create table if not exists accounts (id int not null, owner text, balance numeric(12,2))",
    )?;
    session.execute(
        "insert into accounts select g, 'owner ' || g, g * 10.5 from generate_series(1, 1000) g",
    )?;
    let r = session.execute(
        "select owner, balance from accounts where balance > 10400 order by balance desc limit 3",
    )?;
    let names: Vec<&str> = r.columns.iter().map(|c| c.name.as_str()).collect();
    println!("{}", names.join(" | "));
    for row in &r.rows {
        let cells: Vec<String> = row.iter().map(value_to_string).collect();
        println!("{}", cells.join(" | "));
    }
    println!(
        "{} (plan {:?}, execute {:?}, buffers hit {})",
        r.tag, r.timing.plan, r.timing.execute, r.buffers.shared_hit
    );
    Ok(())
}
