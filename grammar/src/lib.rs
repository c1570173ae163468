//! heapdb-grammar: SQL text to AST, and nothing else (no catalog, no I/O).
//!
//! - [`parse`] / [`parse_one`]: text to [`ast::Statement`]s, or a
//!   [`ParseError`] positioned as PostgreSQL positions it
//!   (`syntax error at or near "FROM"`, `syntax error at end of input`);
//!   [`line_col`] turns its byte offset into a line and column.
//! - [`ast`]: the tree, with identifiers case-folded, literals kept as
//!   written (numbers) or unescaped (strings) and byte offsets on every
//!   expression. Every node implements `Display`, printing SQL that parses
//!   back to an equal tree.
//! - [`scan_single_insert`]: the positions of the table name and literals
//!   of a one-row `INSERT INTO t VALUES (literals)`, read in one pass
//!   without a tree (the statement of bulk scripts).
//! - [`splitter`]: splits a script into statements on top-level semicolons
//!   and tells whether buffered input is complete (for a shell's
//!   continuation prompt).
//!
//! The accepted language is written down in `sql.ebnf` at the crate root;
//! a test parses every example statement in it.
//!
//! ```
//! use heapdb_grammar::{parse_one, ast::Statement};
//! let stmt = parse_one("select a + 1 AS b from T where c is not null").unwrap();
//! assert!(matches!(stmt, Statement::Query(_)));
//! assert_eq!(stmt.to_string(), "SELECT a + 1 AS b FROM t WHERE c IS NOT NULL");
//! ```

pub mod ast;
mod display;
pub mod error;
pub mod keywords;
pub mod lexer;
mod parser;
pub mod splitter;
mod strlit;
mod unicode_literal;

pub use error::{line_col, ParseError, ParseErrorKind};
pub use parser::{
    parse, parse_one, parse_with, scan_single_insert, LiteralKind, ParseOptions, ParseWarning,
    ScannedInsert, ScannedLiteral, MAX_DEPTH,
};
pub use splitter::{is_incomplete, split_statements, Piece};

/// The text of `sql.ebnf`: the accepted language, for tools that show it
/// (the shell's `\h` draws its synopses from it).
pub const EBNF: &str = include_str!("../sql.ebnf");
