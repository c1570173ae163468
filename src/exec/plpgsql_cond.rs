//! PL/pgSQL's exception condition names (PostgreSQL's `plerrcodes.h`):
//! what an `EXCEPTION WHEN name` handler catches and which SQLSTATE
//! `RAISE name` / `USING ERRCODE = 'name'` raises.
//!
//! Invariant: a handler matches an error by its five-character code; a
//! code ending in `000` names a whole class (`data_exception` catches
//! every `22xxx`), and `others` catches everything but query cancel and
//! assertion failures, as in PostgreSQL.

use crate::error::SqlState;

/// Condition names and their SQLSTATEs.
const NAMES: &[(&str, &str)] = &[
    ("successful_completion", "00000"),
    ("feature_not_supported", "0A000"),
    ("cardinality_violation", "21000"),
    ("data_exception", "22000"),
    ("string_data_right_truncation", "22001"),
    ("null_value_no_indicator_parameter", "22002"),
    ("numeric_value_out_of_range", "22003"),
    ("null_value_not_allowed", "22004"),
    ("error_in_assignment", "22005"),
    ("invalid_datetime_format", "22007"),
    ("datetime_field_overflow", "22008"),
    ("invalid_time_zone_displacement_value", "22009"),
    ("substring_error", "22011"),
    ("division_by_zero", "22012"),
    ("interval_field_overflow", "22015"),
    ("character_not_in_repertoire", "22021"),
    ("invalid_parameter_value", "22023"),
    ("invalid_escape_sequence", "22025"),
    ("invalid_regular_expression", "2201B"),
    ("invalid_argument_for_logarithm", "2201E"),
    ("invalid_argument_for_power_function", "2201F"),
    ("invalid_argument_for_width_bucket_function", "2201G"),
    ("invalid_row_count_in_limit_clause", "2201W"),
    ("invalid_row_count_in_result_offset_clause", "2201X"),
    ("array_subscript_error", "2202E"),
    ("invalid_text_representation", "22P02"),
    ("invalid_binary_representation", "22P03"),
    ("bad_copy_file_format", "22P04"),
    ("integrity_constraint_violation", "23000"),
    ("restrict_violation", "23001"),
    ("not_null_violation", "23502"),
    ("foreign_key_violation", "23503"),
    ("unique_violation", "23505"),
    ("check_violation", "23514"),
    ("exclusion_violation", "23P01"),
    ("invalid_transaction_state", "25000"),
    ("active_sql_transaction", "25001"),
    ("no_active_sql_transaction", "25P01"),
    ("in_failed_sql_transaction", "25P02"),
    ("dependent_objects_still_exist", "2BP01"),
    ("function_executed_no_return_statement", "2F005"),
    ("transaction_rollback", "40000"),
    ("serialization_failure", "40001"),
    ("deadlock_detected", "40P01"),
    ("syntax_error_or_access_rule_violation", "42000"),
    ("insufficient_privilege", "42501"),
    ("syntax_error", "42601"),
    ("invalid_name", "42602"),
    ("duplicate_column", "42701"),
    ("ambiguous_column", "42702"),
    ("undefined_column", "42703"),
    ("undefined_object", "42704"),
    ("duplicate_object", "42710"),
    ("duplicate_alias", "42712"),
    ("duplicate_function", "42723"),
    ("ambiguous_function", "42725"),
    ("grouping_error", "42803"),
    ("datatype_mismatch", "42804"),
    ("wrong_object_type", "42809"),
    ("cannot_coerce", "42846"),
    ("undefined_function", "42883"),
    ("undefined_table", "42P01"),
    ("duplicate_table", "42P07"),
    ("invalid_column_reference", "42P10"),
    ("invalid_function_definition", "42P13"),
    ("invalid_table_definition", "42P16"),
    ("invalid_object_definition", "42P17"),
    ("indeterminate_datatype", "42P18"),
    ("with_check_option_violation", "44000"),
    ("insufficient_resources", "53000"),
    ("disk_full", "53100"),
    ("out_of_memory", "53200"),
    ("program_limit_exceeded", "54000"),
    ("statement_too_complex", "54001"),
    ("object_not_in_prerequisite_state", "55000"),
    ("object_in_use", "55006"),
    ("cant_change_runtime_param", "55P02"),
    ("query_canceled", "57014"),
    ("io_error", "58030"),
    ("undefined_file", "58P01"),
    ("plpgsql_error", "P0000"),
    ("raise_exception", "P0001"),
    ("no_data_found", "P0002"),
    ("too_many_rows", "P0003"),
    ("assert_failure", "P0004"),
    ("internal_error", "XX000"),
    ("data_corrupted", "XX001"),
];

/// The SQLSTATEs heapdb can raise by name or code.
const RAISABLE: &[SqlState] = &[
    SqlState::FeatureNotSupported,
    SqlState::CardinalityViolation,
    SqlState::StringDataRightTruncation,
    SqlState::NumericValueOutOfRange,
    SqlState::NullValueNotAllowed,
    SqlState::InvalidDatetimeFormat,
    SqlState::DatetimeFieldOverflow,
    SqlState::DivisionByZero,
    SqlState::InvalidParameterValue,
    SqlState::InvalidTextRepresentation,
    SqlState::NotNullViolation,
    SqlState::UniqueViolation,
    SqlState::CheckViolation,
    SqlState::SerializationFailure,
    SqlState::SyntaxError,
    SqlState::UndefinedColumn,
    SqlState::UndefinedObject,
    SqlState::UndefinedFunction,
    SqlState::UndefinedTable,
    SqlState::DuplicateObject,
    SqlState::InvalidFunctionDefinition,
    SqlState::RaiseException,
    SqlState::NoDataFound,
    SqlState::TooManyRows,
    SqlState::AssertFailure,
    SqlState::ProgramLimitExceeded,
    SqlState::ObjectNotInPrerequisiteState,
    SqlState::QueryCanceled,
    SqlState::InternalError,
];

/// A handler's condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// `OTHERS`.
    Others,
    /// A SQLSTATE, or a class when it ends in `000`.
    Code(String),
}

impl Condition {
    /// The condition written `text` (a name, or `sqlstate xxxxx`), or
    /// `None` when no condition has that name.
    pub fn parse(text: &str) -> Option<Condition> {
        if text == "others" {
            return Some(Condition::Others);
        }
        if let Some(code) = text.strip_prefix("sqlstate ") {
            return valid_code(code).then(|| Condition::Code(code.to_string()));
        }
        code_of(text).map(|c| Condition::Code(c.to_string()))
    }

    /// Whether an error of SQLSTATE `code` is caught.
    pub fn catches(&self, code: &str) -> bool {
        match self {
            Condition::Others => code != "57014" && code != "P0004",
            Condition::Code(c) if c.ends_with("000") => code.get(..2) == c.get(..2),
            Condition::Code(c) => c == code,
        }
    }
}

fn valid_code(code: &str) -> bool {
    code.len() == 5
        && code
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase())
}

/// The SQLSTATE of condition `name`.
pub fn code_of(name: &str) -> Option<&'static str> {
    NAMES.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
}

/// The raisable SQLSTATE of a condition name or five-character code.
pub fn raisable(name_or_code: &str) -> Option<SqlState> {
    let code = code_of(name_or_code).unwrap_or(name_or_code);
    RAISABLE.iter().copied().find(|s| s.code() == code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_match_codes_and_classes() {
        let dz = Condition::parse("division_by_zero").unwrap();
        assert!(dz.catches("22012") && !dz.catches("22003"));
        let class = Condition::parse("data_exception").unwrap();
        assert!(class.catches("22012") && !class.catches("23505"));
        let others = Condition::parse("others").unwrap();
        assert!(others.catches("23505") && !others.catches("57014") && !others.catches("P0004"));
        assert_eq!(
            Condition::parse("sqlstate 22012"),
            Some(Condition::Code("22012".into()))
        );
        assert_eq!(Condition::parse("no_such_condition"), None);
        assert_eq!(
            raisable("unique_violation"),
            Some(SqlState::UniqueViolation)
        );
        assert_eq!(raisable("P0002"), Some(SqlState::NoDataFound));
        for (name, code) in NAMES {
            assert!(valid_code(code), "{name}");
        }
    }
}
