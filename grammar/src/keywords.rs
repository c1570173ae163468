//! SQL keywords and PostgreSQL's four keyword classes.
//!
//! The lexer tags every unquoted word with its [`Keyword`] (or
//! [`Keyword::NoKeyword`]), so the parser compares enum values instead of
//! strings. Only words the parser looks for are listed; option names inside
//! `COPY (...)`, `EXPLAIN (...)` and `VACUUM (...)` are matched as plain
//! identifiers, as PostgreSQL does.
//!
//! The class decides where a keyword may also serve as a name, following
//! PostgreSQL's `kwlist.h`:
//! - [`KeywordClass::Reserved`]: never a name (`SELECT`, `FROM`, `TABLE`).
//! - [`KeywordClass::TypeFunc`]: a function or type name, never a column,
//!   table or alias name (`LEFT`, `JOIN`, `VERBOSE`).
//! - [`KeywordClass::ColName`]: a column, table or alias name, but not a
//!   function name (`INTEGER`, `VALUES`, `BETWEEN`).
//! - [`KeywordClass::Unreserved`]: any name (`BEGIN`, `COPY`, `LEVEL`).

/// Where a keyword may also be used as a name (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeywordClass {
    /// Usable as any name.
    Unreserved,
    /// Usable as a column, table or alias name, not as a function name.
    ColName,
    /// Usable as a function or type name only.
    TypeFunc,
    /// Never a name.
    Reserved,
}

macro_rules! keywords {
    ($($variant:ident = $text:literal $class:ident,)*) => {
        /// A keyword the parser recognises; `NoKeyword` for any other word.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Keyword {
            /// A word that is not a keyword: an ordinary identifier.
            NoKeyword,
            $(
                #[doc = concat!("`", $text, "`")]
                $variant,
            )*
        }

        impl Keyword {
            /// The keyword for a lower-case word, or `NoKeyword`.
            fn from_lower(word: &str) -> Keyword {
                match word {
                    $($text => Keyword::$variant,)*
                    _ => Keyword::NoKeyword,
                }
            }

            /// The keyword's class (`Unreserved` for `NoKeyword`).
            pub fn class(self) -> KeywordClass {
                match self {
                    Keyword::NoKeyword => KeywordClass::Unreserved,
                    $(Keyword::$variant => KeywordClass::$class,)*
                }
            }

            /// The keyword in lower case (`""` for `NoKeyword`).
            pub fn as_str(self) -> &'static str {
                match self {
                    Keyword::NoKeyword => "",
                    $(Keyword::$variant => $text,)*
                }
            }
        }
    };
}

keywords! {
    Abort = "abort" Unreserved,
    Add = "add" Unreserved,
    All = "all" Reserved,
    Alter = "alter" Unreserved,
    Analyse = "analyse" Reserved,
    Analyze = "analyze" Reserved,
    And = "and" Reserved,
    Any = "any" Reserved,
    Array = "array" Reserved,
    As = "as" Reserved,
    Asc = "asc" Reserved,
    At = "at" Unreserved,
    Begin = "begin" Unreserved,
    Between = "between" ColName,
    Bigint = "bigint" ColName,
    Binary = "binary" TypeFunc,
    Boolean = "boolean" ColName,
    Both = "both" Reserved,
    By = "by" Unreserved,
    Cascade = "cascade" Unreserved,
    Case = "case" Reserved,
    Cast = "cast" Reserved,
    Char = "char" ColName,
    Character = "character" ColName,
    Check = "check" Reserved,
    Checkpoint = "checkpoint" Unreserved,
    Collate = "collate" Reserved,
    Column = "column" Reserved,
    Commit = "commit" Unreserved,
    Committed = "committed" Unreserved,
    Conflict = "conflict" Unreserved,
    Constraint = "constraint" Reserved,
    Copy = "copy" Unreserved,
    Create = "create" Reserved,
    Cross = "cross" TypeFunc,
    Csv = "csv" Unreserved,
    CurrentDate = "current_date" Reserved,
    CurrentTime = "current_time" Reserved,
    CurrentTimestamp = "current_timestamp" Reserved,
    CurrentUser = "current_user" Reserved,
    Dec = "dec" ColName,
    Decimal = "decimal" ColName,
    Default = "default" Reserved,
    Delete = "delete" Unreserved,
    Delimiter = "delimiter" Unreserved,
    Desc = "desc" Reserved,
    Distinct = "distinct" Reserved,
    Do = "do" Reserved,
    Double = "double" Unreserved,
    Drop = "drop" Unreserved,
    Else = "else" Reserved,
    Encoding = "encoding" Unreserved,
    End = "end" Reserved,
    Escape = "escape" Unreserved,
    Except = "except" Reserved,
    Exists = "exists" ColName,
    Explain = "explain" Unreserved,
    False = "false" Reserved,
    Fetch = "fetch" Reserved,
    Filter = "filter" Unreserved,
    First = "first" Unreserved,
    Float = "float" ColName,
    For = "for" Reserved,
    Force = "force" Unreserved,
    Foreign = "foreign" Reserved,
    Freeze = "freeze" TypeFunc,
    From = "from" Reserved,
    Full = "full" TypeFunc,
    Grant = "grant" Reserved,
    Group = "group" Reserved,
    Having = "having" Reserved,
    Header = "header" Unreserved,
    If = "if" Unreserved,
    Ilike = "ilike" TypeFunc,
    In = "in" Reserved,
    Include = "include" Unreserved,
    Index = "index" Unreserved,
    Inner = "inner" TypeFunc,
    Insert = "insert" Unreserved,
    Int = "int" ColName,
    Integer = "integer" ColName,
    Intersect = "intersect" Reserved,
    Interval = "interval" ColName,
    Into = "into" Reserved,
    Is = "is" TypeFunc,
    Isnull = "isnull" TypeFunc,
    Isolation = "isolation" Unreserved,
    Join = "join" TypeFunc,
    Key = "key" Unreserved,
    Last = "last" Unreserved,
    Lateral = "lateral" Reserved,
    Leading = "leading" Reserved,
    Left = "left" TypeFunc,
    Level = "level" Unreserved,
    Like = "like" TypeFunc,
    Limit = "limit" Reserved,
    Local = "local" Unreserved,
    Localtime = "localtime" Reserved,
    Localtimestamp = "localtimestamp" Reserved,
    Natural = "natural" TypeFunc,
    Not = "not" Reserved,
    Nothing = "nothing" Unreserved,
    Notnull = "notnull" TypeFunc,
    Null = "null" Reserved,
    Nulls = "nulls" Unreserved,
    Numeric = "numeric" ColName,
    Offset = "offset" Reserved,
    On = "on" Reserved,
    Only = "only" Reserved,
    Or = "or" Reserved,
    Order = "order" Reserved,
    Outer = "outer" TypeFunc,
    Overlaps = "overlaps" TypeFunc,
    Placing = "placing" Reserved,
    Precision = "precision" ColName,
    Primary = "primary" Reserved,
    Quote = "quote" Unreserved,
    Read = "read" Unreserved,
    Real = "real" ColName,
    References = "references" Reserved,
    Reindex = "reindex" Unreserved,
    Repeatable = "repeatable" Unreserved,
    Reset = "reset" Unreserved,
    Restrict = "restrict" Unreserved,
    Returning = "returning" Reserved,
    Right = "right" TypeFunc,
    Rollback = "rollback" Unreserved,
    Row = "row" ColName,
    Select = "select" Reserved,
    Serializable = "serializable" Unreserved,
    Session = "session" Unreserved,
    SessionUser = "session_user" Reserved,
    Set = "set" Unreserved,
    Show = "show" Unreserved,
    Similar = "similar" TypeFunc,
    Smallint = "smallint" ColName,
    Some = "some" Reserved,
    Start = "start" Unreserved,
    Stdin = "stdin" Unreserved,
    Stdout = "stdout" Unreserved,
    Symmetric = "symmetric" Reserved,
    Table = "table" Reserved,
    Then = "then" Reserved,
    Time = "time" ColName,
    Timestamp = "timestamp" ColName,
    To = "to" Reserved,
    Trailing = "trailing" Reserved,
    Transaction = "transaction" Unreserved,
    True = "true" Reserved,
    Truncate = "truncate" Unreserved,
    Uescape = "uescape" Unreserved,
    Uncommitted = "uncommitted" Unreserved,
    Union = "union" Reserved,
    Unique = "unique" Reserved,
    Unknown = "unknown" Unreserved,
    Update = "update" Unreserved,
    User = "user" Reserved,
    Using = "using" Reserved,
    Vacuum = "vacuum" Unreserved,
    Values = "values" ColName,
    Varchar = "varchar" ColName,
    Variadic = "variadic" Reserved,
    Varying = "varying" Unreserved,
    Verbose = "verbose" TypeFunc,
    When = "when" Reserved,
    Where = "where" Reserved,
    Window = "window" Reserved,
    With = "with" Reserved,
    Without = "without" Unreserved,
    Work = "work" Unreserved,
    Write = "write" Unreserved,
    Zone = "zone" Unreserved,
}

/// The longest keyword's length; longer words are never keywords.
const MAX_KEYWORD_LEN: usize = 17;

impl Keyword {
    /// The keyword for `word` in any letter case, or `NoKeyword`.
    ///
    /// Hot path of the lexer: lower-cases into a stack buffer (no allocation)
    /// and lets the compiler's string `match` do the lookup.
    pub fn lookup(word: &str) -> Keyword {
        let bytes = word.as_bytes();
        if bytes.len() > MAX_KEYWORD_LEN {
            return Keyword::NoKeyword;
        }
        let mut buf = [0u8; MAX_KEYWORD_LEN];
        for (dst, src) in buf.iter_mut().zip(bytes) {
            *dst = src.to_ascii_lowercase();
        }
        // Lower-casing ASCII letters keeps UTF-8 valid; a word cut inside a
        // character cannot happen as the whole word is copied.
        std::str::from_utf8(&buf[..bytes.len()]).map_or(Keyword::NoKeyword, Keyword::from_lower)
    }

    /// Whether the keyword may name a column, table or alias.
    pub fn is_col_name(self) -> bool {
        matches!(
            self.class(),
            KeywordClass::Unreserved | KeywordClass::ColName
        )
    }

    /// Whether the keyword may be an output-column label without `AS`
    /// (PostgreSQL 14+'s `BARE_LABEL`): every keyword but those that could
    /// continue or end a select list (`FROM`, `ORDER`, `OVERLAPS`, ...).
    pub fn is_bare_label(self) -> bool {
        !matches!(
            self,
            Keyword::Array
                | Keyword::As
                | Keyword::Char
                | Keyword::Character
                | Keyword::Create
                | Keyword::Except
                | Keyword::Fetch
                | Keyword::Filter
                | Keyword::For
                | Keyword::From
                | Keyword::Grant
                | Keyword::Group
                | Keyword::Having
                | Keyword::Intersect
                | Keyword::Into
                | Keyword::Limit
                | Keyword::Offset
                | Keyword::On
                | Keyword::Order
                | Keyword::Overlaps
                | Keyword::Precision
                | Keyword::Returning
                | Keyword::To
                | Keyword::Union
                | Keyword::Varying
                | Keyword::Where
                | Keyword::Window
                | Keyword::With
                | Keyword::Without
        )
    }

    /// Whether the keyword may name a function or type.
    pub fn is_func_name(self) -> bool {
        matches!(
            self.class(),
            KeywordClass::Unreserved | KeywordClass::TypeFunc
        )
    }
}

/// Whether `name` (already folded or exact) must be double-quoted to be read
/// back as the same identifier: anything but a lower-case plain identifier,
/// and any keyword that is not unreserved.
pub fn needs_quotes(name: &str) -> bool {
    let bytes = name.as_bytes();
    let Some(&first) = bytes.first() else {
        return true;
    };
    if !(first.is_ascii_lowercase() || first == b'_' || first >= 0x80) {
        return true;
    }
    if !bytes.iter().all(|&b| {
        b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'$' || b >= 0x80
    }) {
        return true;
    }
    Keyword::lookup(name).class() != KeywordClass::Unreserved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_ignores_case_and_rejects_non_keywords() {
        assert_eq!(Keyword::lookup("SeLeCt"), Keyword::Select);
        assert_eq!(
            Keyword::lookup("current_timestamp"),
            Keyword::CurrentTimestamp
        );
        assert_eq!(Keyword::lookup("selects"), Keyword::NoKeyword);
        assert_eq!(
            Keyword::lookup("a_very_long_identifier_name"),
            Keyword::NoKeyword
        );
        assert_eq!(Keyword::Select.as_str(), "select");
    }

    #[test]
    fn max_len_covers_every_keyword() {
        assert_eq!("current_timestamp".len(), MAX_KEYWORD_LEN);
    }

    #[test]
    fn quoting_rules() {
        assert!(!needs_quotes("abc_1"));
        assert!(!needs_quotes("begin"));
        assert!(needs_quotes("Abc"));
        assert!(needs_quotes("select"));
        assert!(needs_quotes("left"));
        assert!(needs_quotes("integer"));
        assert!(needs_quotes("1a"));
        assert!(needs_quotes(""));
        assert!(needs_quotes("a b"));
    }
}
