//! The `heapdb` command: argument parsing, then the shell.

fn main() {
    let arg = std::env::args().nth(1);
    match arg.as_deref() {
        Some("--version") | Some("-V") => {
            println!("heapdb {}", env!("CARGO_PKG_VERSION"));
        }
        _ => {
            println!("heapdb {}", env!("CARGO_PKG_VERSION"));
            println!("usage: heapdb [--version]");
        }
    }
}
