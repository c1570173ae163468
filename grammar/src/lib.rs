//! heapdb-grammar: SQL text to AST. A hand-written nom parser, the AST with
//! a `Display` that prints valid SQL, and a script splitter. No catalog, no
//! I/O.
