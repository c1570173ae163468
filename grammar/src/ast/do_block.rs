//! `DO`: an anonymous code block run once.

/// `DO [LANGUAGE lang] 'code'`.
#[derive(Clone, Debug, PartialEq)]
pub struct DoBlock {
    /// The code.
    pub body: String,
    /// `LANGUAGE lang`, when written (PL/pgSQL by default).
    pub language: Option<String>,
}
