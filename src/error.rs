//! The one error type of heapdb, carrying a PostgreSQL SQLSTATE.
//!
//! Every layer below the shell returns [`Result<T>`]. An [`Error`] is a
//! SQLSTATE ([`SqlState`]) plus the message a user reads, with the optional
//! extra lines PostgreSQL prints (`DETAIL`, `HINT`, `CONTEXT`) and, for syntax
//! errors, the byte offset into the statement text so the shell can print the
//! `LINE n:` excerpt with a caret under the offending token.
//!
//! The message follows PostgreSQL's wording whenever PostgreSQL has an error
//! for the same situation (lower case, no trailing period), so users and tests
//! can compare the two side by side.
//!
//! Construct errors with [`Error::new`] or the [`err!`](crate::err) macro, which
//! reads like prose at the call site:
//!
//! ```
//! use heapdb::{err, error::{Result, SqlState}};
//! fn check(d: i32) -> Result<i32> {
//!     if d == 0 {
//!         return Err(err!(DivisionByZero, "division by zero"));
//!     }
//!     Ok(10 / d)
//! }
//! assert_eq!(check(0).unwrap_err().code, SqlState::DivisionByZero);
//! ```

use std::fmt;

/// A `Result` whose error is heapdb's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The SQLSTATE classes heapdb raises, named as in PostgreSQL's
/// `errcodes.txt`. [`SqlState::code`] gives the five-character code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlState {
    /// 0A000 feature_not_supported
    FeatureNotSupported,
    /// 21000 cardinality_violation (e.g. a scalar subquery returning two rows)
    CardinalityViolation,
    /// 22001 string_data_right_truncation
    StringDataRightTruncation,
    /// 22003 numeric_value_out_of_range
    NumericValueOutOfRange,
    /// 22021 character_not_in_repertoire (e.g. `E'\xff'` is not UTF-8)
    CharacterNotInRepertoire,
    /// 22007 invalid_datetime_format
    InvalidDatetimeFormat,
    /// 22008 datetime_field_overflow
    DatetimeFieldOverflow,
    /// 22015 interval_field_overflow
    IntervalFieldOverflow,
    /// 22012 division_by_zero
    DivisionByZero,
    /// 22023 invalid_parameter_value
    InvalidParameterValue,
    /// 3F000 invalid_schema_name
    InvalidSchemaName,
    /// 22009 invalid_time_zone_displacement_value
    InvalidTimeZoneDisplacementValue,
    /// 2201F invalid_argument_for_power_function
    InvalidArgumentForPowerFunction,
    /// 2201G invalid_argument_for_width_bucket_function
    InvalidArgumentForWidthBucketFunction,
    /// 2201E invalid_argument_for_logarithm
    InvalidArgumentForLogarithm,
    /// 22025 invalid_escape_sequence (LIKE patterns)
    InvalidEscapeSequence,
    /// 2200C invalid_use_of_escape_character
    InvalidUseOfEscapeCharacter,
    /// 22011 substring_error
    SubstringError,
    /// 2202E array_subscript_error (`get_byte` past the end)
    ArraySubscriptError,
    /// 2201B invalid_regular_expression
    InvalidRegularExpression,
    /// 22P02 invalid_text_representation
    InvalidTextRepresentation,
    /// 22P04 bad_copy_file_format
    BadCopyFileFormat,
    /// 22004 null_value_not_allowed
    NullValueNotAllowed,
    /// 22P05 untranslatable_character
    UntranslatableCharacter,
    /// 2201W invalid_row_count_in_limit_clause
    InvalidRowCountInLimitClause,
    /// 2201X invalid_row_count_in_result_offset_clause
    InvalidRowCountInResultOffsetClause,
    /// 23502 not_null_violation
    NotNullViolation,
    /// 23505 unique_violation
    UniqueViolation,
    /// 23503 foreign_key_violation
    ForeignKeyViolation,
    /// 42830 invalid_foreign_key
    InvalidForeignKey,
    /// 42P16 invalid_table_definition
    InvalidTableDefinition,
    /// 2BP01 dependent_objects_still_exist
    DependentObjectsStillExist,
    /// 25001 active_sql_transaction
    ActiveSqlTransaction,
    /// 25P01 no_active_sql_transaction
    NoActiveSqlTransaction,
    /// 25P02 in_failed_sql_transaction
    InFailedSqlTransaction,
    /// 25006 read_only_sql_transaction
    ReadOnlySqlTransaction,
    /// 44000 with_check_option_violation
    WithCheckOptionViolation,
    /// 40001 serialization_failure
    SerializationFailure,
    /// 40P01 deadlock_detected
    DeadlockDetected,
    /// 42501 insufficient_privilege
    InsufficientPrivilege,
    /// 42601 syntax_error
    SyntaxError,
    /// 42602 invalid_name
    InvalidName,
    /// 42701 duplicate_column
    DuplicateColumn,
    /// 42702 ambiguous_column
    AmbiguousColumn,
    /// 42725 ambiguous_function (also `operator is not unique`)
    AmbiguousFunction,
    /// 42712 duplicate_alias
    DuplicateAlias,
    /// 42P03 duplicate_cursor
    DuplicateCursor,
    /// 34000 invalid_cursor_name
    InvalidCursorName,
    /// 42P05 duplicate_prepared_statement
    DuplicatePreparedStatement,
    /// 26000 invalid_sql_statement_name
    InvalidSqlStatementName,
    /// 42703 undefined_column
    UndefinedColumn,
    /// 42704 undefined_object (also unknown configuration parameters)
    UndefinedObject,
    /// 42803 grouping_error
    GroupingError,
    /// 42804 datatype_mismatch
    DatatypeMismatch,
    /// 42809 wrong_object_type
    WrongObjectType,
    /// 42846 cannot_coerce
    CannotCoerce,
    /// 42883 undefined_function
    UndefinedFunction,
    /// 42P01 undefined_table
    UndefinedTable,
    /// 42P07 duplicate_table
    DuplicateTable,
    /// 42P10 invalid_column_reference
    InvalidColumnReference,
    /// 42P17 invalid_object_definition
    InvalidObjectDefinition,
    /// 42P18 indeterminate_datatype
    IndeterminateDatatype,
    /// 42P19 invalid_recursion
    InvalidRecursion,
    /// 42P13 invalid_function_definition
    InvalidFunctionDefinition,
    /// 42723 duplicate_function
    DuplicateFunction,
    /// 42710 duplicate_object
    DuplicateObject,
    /// 23514 check_violation
    CheckViolation,
    /// 2F005 function_executed_no_return_statement
    FunctionExecutedNoReturnStatement,
    /// P0001 raise_exception
    RaiseException,
    /// P0002 no_data_found (`SELECT ... INTO STRICT` found no row)
    NoDataFound,
    /// P0003 too_many_rows (`SELECT ... INTO STRICT` found several)
    TooManyRows,
    /// P0004 assert_failure
    AssertFailure,
    /// 53100 disk_full
    DiskFull,
    /// 53200 out_of_memory
    OutOfMemory,
    /// 54000 program_limit_exceeded
    ProgramLimitExceeded,
    /// 54001 statement_too_complex
    StatementTooComplex,
    /// 55000 object_not_in_prerequisite_state
    ObjectNotInPrerequisiteState,
    /// 55006 object_in_use
    ObjectInUse,
    /// 55P02 cant_change_runtime_param
    CantChangeRuntimeParam,
    /// 57014 query_canceled
    QueryCanceled,
    /// 58030 io_error
    IoError,
    /// 58P01 undefined_file
    UndefinedFile,
    /// XX000 internal_error
    InternalError,
    /// XX001 data_corrupted
    DataCorrupted,
    /// 42P20 windowing_error
    WindowingError,
    /// 22013 invalid_preceding_or_following_size
    InvalidPrecedingOrFollowingSize,
    /// 22014 invalid_argument_for_ntile_function
    InvalidArgumentForNtileFunction,
    /// 22016 invalid_argument_for_nth_value_function
    InvalidArgumentForNthValueFunction,
    /// 2200H sequence_generator_limit_exceeded
    SequenceGeneratorLimitExceeded,
    /// 428C9 generated_always
    GeneratedAlways,
}

impl SqlState {
    /// The five-character SQLSTATE code, e.g. `"42601"`.
    pub fn code(self) -> &'static str {
        use SqlState::*;
        match self {
            FeatureNotSupported => "0A000",
            CardinalityViolation => "21000",
            StringDataRightTruncation => "22001",
            NumericValueOutOfRange => "22003",
            CharacterNotInRepertoire => "22021",
            InvalidDatetimeFormat => "22007",
            DatetimeFieldOverflow => "22008",
            IntervalFieldOverflow => "22015",
            DivisionByZero => "22012",
            InvalidParameterValue => "22023",
            InvalidSchemaName => "3F000",
            InvalidTimeZoneDisplacementValue => "22009",
            InvalidArgumentForPowerFunction => "2201F",
            InvalidArgumentForWidthBucketFunction => "2201G",
            InvalidArgumentForLogarithm => "2201E",
            InvalidEscapeSequence => "22025",
            InvalidUseOfEscapeCharacter => "2200C",
            SubstringError => "22011",
            ArraySubscriptError => "2202E",
            InvalidRegularExpression => "2201B",
            InvalidTextRepresentation => "22P02",
            BadCopyFileFormat => "22P04",
            NullValueNotAllowed => "22004",
            UntranslatableCharacter => "22P05",
            InvalidRowCountInLimitClause => "2201W",
            InvalidRowCountInResultOffsetClause => "2201X",
            NotNullViolation => "23502",
            UniqueViolation => "23505",
            ForeignKeyViolation => "23503",
            InvalidForeignKey => "42830",
            InvalidTableDefinition => "42P16",
            DependentObjectsStillExist => "2BP01",
            ActiveSqlTransaction => "25001",
            NoActiveSqlTransaction => "25P01",
            InFailedSqlTransaction => "25P02",
            ReadOnlySqlTransaction => "25006",
            WithCheckOptionViolation => "44000",
            SerializationFailure => "40001",
            DeadlockDetected => "40P01",
            InsufficientPrivilege => "42501",
            SyntaxError => "42601",
            InvalidName => "42602",
            DuplicateColumn => "42701",
            AmbiguousColumn => "42702",
            AmbiguousFunction => "42725",
            DuplicateAlias => "42712",
            DuplicateCursor => "42P03",
            InvalidCursorName => "34000",
            DuplicatePreparedStatement => "42P05",
            InvalidSqlStatementName => "26000",
            UndefinedColumn => "42703",
            UndefinedObject => "42704",
            GroupingError => "42803",
            DatatypeMismatch => "42804",
            WrongObjectType => "42809",
            CannotCoerce => "42846",
            UndefinedFunction => "42883",
            UndefinedTable => "42P01",
            DuplicateTable => "42P07",
            InvalidColumnReference => "42P10",
            InvalidObjectDefinition => "42P17",
            IndeterminateDatatype => "42P18",
            InvalidRecursion => "42P19",
            InvalidFunctionDefinition => "42P13",
            DuplicateFunction => "42723",
            DuplicateObject => "42710",
            CheckViolation => "23514",
            FunctionExecutedNoReturnStatement => "2F005",
            RaiseException => "P0001",
            NoDataFound => "P0002",
            TooManyRows => "P0003",
            AssertFailure => "P0004",
            DiskFull => "53100",
            OutOfMemory => "53200",
            ProgramLimitExceeded => "54000",
            StatementTooComplex => "54001",
            ObjectNotInPrerequisiteState => "55000",
            ObjectInUse => "55006",
            CantChangeRuntimeParam => "55P02",
            QueryCanceled => "57014",
            IoError => "58030",
            UndefinedFile => "58P01",
            InternalError => "XX000",
            DataCorrupted => "XX001",
            WindowingError => "42P20",
            InvalidPrecedingOrFollowingSize => "22013",
            InvalidArgumentForNtileFunction => "22014",
            InvalidArgumentForNthValueFunction => "22016",
            SequenceGeneratorLimitExceeded => "2200H",
            GeneratedAlways => "428C9",
        }
    }
}

impl fmt::Display for SqlState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// An error as PostgreSQL reports one: a SQLSTATE, a primary message and
/// optional detail, hint, context and statement position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The SQLSTATE class of the error.
    pub code: SqlState,
    /// The primary message, in PostgreSQL's wording (`relation "t" does not exist`).
    pub message: String,
    /// A `DETAIL:` line, when there is more to say about the cause.
    pub detail: Option<String>,
    /// A `HINT:` line, when there is advice on how to fix it.
    pub hint: Option<String>,
    /// A `CONTEXT:` line, e.g. `COPY t, line 12, column a: "x"`.
    pub context: Option<String>,
    /// Byte offset into the statement text of the offending token (syntax
    /// errors and some binder errors), for the shell's `LINE n:` excerpt.
    pub position: Option<usize>,
}

impl Error {
    /// An error with `code` and `message` and nothing else.
    pub fn new(code: SqlState, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
            detail: None,
            hint: None,
            context: None,
            position: None,
        }
    }

    /// Adds a `DETAIL:` line.
    pub fn with_detail(mut self, detail: impl Into<String>) -> Error {
        self.detail = Some(detail.into());
        self
    }

    /// Adds a `HINT:` line.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Error {
        self.hint = Some(hint.into());
        self
    }

    /// Adds a `CONTEXT:` line.
    pub fn with_context(mut self, context: impl Into<String>) -> Error {
        self.context = Some(context.into());
        self
    }

    /// Records the byte offset of the offending token in the statement text.
    pub fn with_position(mut self, position: usize) -> Error {
        self.position = Some(position);
        self
    }

    /// An internal error: something heapdb believed impossible happened.
    pub fn internal(message: impl Into<String>) -> Error {
        Error::new(SqlState::InternalError, message)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Error {
        let code = match e.kind() {
            _ if e.raw_os_error() == Some(libc::ENOSPC) => SqlState::DiskFull,
            std::io::ErrorKind::NotFound => SqlState::UndefinedFile,
            std::io::ErrorKind::PermissionDenied => SqlState::InsufficientPrivilege,
            _ => SqlState::IoError,
        };
        Error::new(code, e.to_string())
    }
}

/// Builds an [`Error`] from a [`SqlState`] variant name and a format string:
/// `err!(UndefinedTable, "relation \"{}\" does not exist", name)`.
#[macro_export]
macro_rules! err {
    ($code:ident, $($arg:tt)+) => {
        $crate::error::Error::new($crate::error::SqlState::$code, format!($($arg)+))
    };
}

/// A parse error as the SQL error PostgreSQL reports.
pub fn parse_error(e: heapdb_grammar::ParseError) -> Error {
    let code = match e.kind {
        heapdb_grammar::ParseErrorKind::Syntax => SqlState::SyntaxError,
        heapdb_grammar::ParseErrorKind::TooDeep => SqlState::StatementTooComplex,
        heapdb_grammar::ParseErrorKind::InvalidParameterValue => SqlState::InvalidParameterValue,
        heapdb_grammar::ParseErrorKind::CharacterNotInRepertoire => {
            SqlState::CharacterNotInRepertoire
        }
        heapdb_grammar::ParseErrorKind::FeatureNotSupported => SqlState::FeatureNotSupported,
        heapdb_grammar::ParseErrorKind::InvalidEscapeSequence => SqlState::InvalidEscapeSequence,
    };
    let mut out = Error::new(code, e.message).with_position(e.offset);
    out.hint = e.hint.map(str::to_string);
    out.detail = e.detail.map(str::to_string);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_five_characters_and_distinct() {
        use std::collections::HashSet;
        use SqlState::*;
        let all = [
            FeatureNotSupported,
            CardinalityViolation,
            StringDataRightTruncation,
            NumericValueOutOfRange,
            CharacterNotInRepertoire,
            InvalidDatetimeFormat,
            DatetimeFieldOverflow,
            IntervalFieldOverflow,
            DivisionByZero,
            InvalidParameterValue,
            InvalidTimeZoneDisplacementValue,
            InvalidArgumentForPowerFunction,
            InvalidArgumentForLogarithm,
            InvalidEscapeSequence,
            InvalidUseOfEscapeCharacter,
            ArraySubscriptError,
            InvalidRegularExpression,
            InvalidArgumentForWidthBucketFunction,
            SubstringError,
            InvalidTextRepresentation,
            BadCopyFileFormat,
            NullValueNotAllowed,
            UntranslatableCharacter,
            InvalidRowCountInLimitClause,
            InvalidRowCountInResultOffsetClause,
            NotNullViolation,
            UniqueViolation,
            ForeignKeyViolation,
            InvalidForeignKey,
            InvalidTableDefinition,
            DependentObjectsStillExist,
            ActiveSqlTransaction,
            NoActiveSqlTransaction,
            InFailedSqlTransaction,
            ReadOnlySqlTransaction,
            WithCheckOptionViolation,
            SerializationFailure,
            DeadlockDetected,
            InsufficientPrivilege,
            SyntaxError,
            InvalidName,
            DuplicateColumn,
            AmbiguousColumn,
            AmbiguousFunction,
            DuplicateAlias,
            DuplicateCursor,
            InvalidCursorName,
            DuplicatePreparedStatement,
            InvalidSqlStatementName,
            UndefinedColumn,
            UndefinedObject,
            GroupingError,
            DatatypeMismatch,
            WrongObjectType,
            CannotCoerce,
            UndefinedFunction,
            UndefinedTable,
            DuplicateTable,
            InvalidColumnReference,
            InvalidObjectDefinition,
            IndeterminateDatatype,
            InvalidRecursion,
            InvalidFunctionDefinition,
            DuplicateFunction,
            DuplicateObject,
            CheckViolation,
            FunctionExecutedNoReturnStatement,
            RaiseException,
            NoDataFound,
            TooManyRows,
            AssertFailure,
            DiskFull,
            OutOfMemory,
            ProgramLimitExceeded,
            StatementTooComplex,
            ObjectNotInPrerequisiteState,
            ObjectInUse,
            CantChangeRuntimeParam,
            QueryCanceled,
            IoError,
            UndefinedFile,
            InternalError,
            DataCorrupted,
            WindowingError,
            InvalidPrecedingOrFollowingSize,
            InvalidArgumentForNtileFunction,
            InvalidArgumentForNthValueFunction,
            SequenceGeneratorLimitExceeded,
            GeneratedAlways,
        ];
        let mut seen = HashSet::new();
        for s in all {
            assert_eq!(s.code().len(), 5, "{s:?}");
            assert!(seen.insert(s.code()), "duplicate code {}", s.code());
        }
    }

    #[test]
    fn macro_formats_and_io_errors_map_to_codes() {
        let e = err!(UndefinedTable, "relation \"{}\" does not exist", "t");
        assert_eq!(e.code.code(), "42P01");
        assert_eq!(e.to_string(), "relation \"t\" does not exist");
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "gone");
        assert_eq!(Error::from(io).code, SqlState::UndefinedFile);
    }
}
