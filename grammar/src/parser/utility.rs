//! Utility statements: `COPY`, `VACUUM`, `ANALYZE`, `EXPLAIN`, transaction
//! control, `SET`/`SHOW`/`RESET`.
//!
//! Parenthesised option lists (`COPY ... WITH (...)`, `EXPLAIN (...)`,
//! `VACUUM (...)`) are generic `name [value]` lists, as in PostgreSQL: the
//! names are checked here, with PostgreSQL's messages for unknown ones.

use super::{PResult, Parser};
use crate::ast::{
    Analyze, Copy, CopyDirection, CopyFormat, CopyOption, CopySource, CopyTarget, Explain,
    ExplainFormat, ExplainOptions, IsolationLevel, Reset, Set, SetArg, SetValue, Show, Statement,
    TableAndColumns, TransactionModes, Vacuum,
};
use crate::error::ParseErrorKind;
use crate::keywords::Keyword;
use crate::lexer::{Token, TokenKind};

/// A generic option: its name token, lower-cased name and value (if any).
struct GenericOption {
    token: Token,
    name: String,
    value: Option<OptionValue>,
}

/// The value of a generic option.
enum OptionValue {
    /// A string, number or word, as text (words lower-cased).
    Scalar(String),
    /// `(col, ...)`
    Columns(Vec<String>),
    /// `*`
    Star,
}

impl Parser<'_> {
    /// Parses `(name [value], ...)`.
    fn parse_generic_options(&mut self) -> PResult<Vec<GenericOption>> {
        self.expect(TokenKind::LParen)?;
        let mut options = Vec::new();
        loop {
            let token = self.peek();
            let name = self.parse_col_label()?;
            let value = match self.peek_kind() {
                TokenKind::Comma | TokenKind::RParen => None,
                TokenKind::Star => {
                    self.bump();
                    Some(OptionValue::Star)
                }
                TokenKind::LParen => Some(OptionValue::Columns(self.parse_paren_col_ids()?)),
                _ => Some(OptionValue::Scalar(match self.parse_set_arg()? {
                    SetArg::String(s) | SetArg::Number(s) | SetArg::Word(s) => s,
                })),
            };
            options.push(GenericOption { token, name, value });
            if !self.eat(TokenKind::Comma) {
                break;
            }
        }
        self.expect(TokenKind::RParen)?;
        Ok(options)
    }

    /// The Boolean value of an option (`true` when no value is given), with
    /// PostgreSQL's message for a non-Boolean value.
    fn option_bool(&self, option: &GenericOption) -> PResult<bool> {
        match &option.value {
            None => Ok(true),
            Some(OptionValue::Scalar(v)) => match v.to_ascii_lowercase().as_str() {
                "true" | "on" | "1" => Ok(true),
                "false" | "off" | "0" => Ok(false),
                _ => Err(self.bool_error(option)),
            },
            Some(_) => Err(self.bool_error(option)),
        }
    }

    fn bool_error(&self, option: &GenericOption) -> crate::ParseError {
        // COPY's HEADER also takes `match` in PostgreSQL, and says so.
        let or_match = if option.name == "header" {
            " or \"match\""
        } else {
            ""
        };
        self.error_msg(
            option.token,
            format!("{} requires a Boolean value{or_match}", option.name),
        )
    }

    /// The string value of an option, or PostgreSQL's error.
    fn option_string(&self, option: &GenericOption) -> PResult<String> {
        match &option.value {
            Some(OptionValue::Scalar(v)) => Ok(v.clone()),
            _ => Err(self.error_msg(
                option.token,
                format!("{} requires a parameter", option.name),
            )),
        }
    }

    /// Parses `COPY ...`.
    pub(crate) fn parse_copy(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::Copy)?;
        let mut options = Vec::new();
        if self.eat_kw(Keyword::Binary) {
            options.push(CopyOption::Format(CopyFormat::Binary));
        }
        let source = if self.eat(TokenKind::LParen) {
            let query = self.parse_query()?;
            self.expect(TokenKind::RParen)?;
            CopySource::Query(Box::new(query))
        } else {
            let name = self.parse_object_name()?;
            let columns = if self.at(TokenKind::LParen) {
                self.parse_paren_col_ids()?
            } else {
                Vec::new()
            };
            CopySource::Table { name, columns }
        };
        let direction = if self.eat_kw(Keyword::From) {
            CopyDirection::From
        } else {
            self.expect_kw(Keyword::To)?;
            CopyDirection::To
        };
        if matches!(source, CopySource::Query(_)) && direction == CopyDirection::From {
            // PostgreSQL's grammar has no `COPY (query) FROM`.
            return Err(self.error_at(self.tokens[self.pos - 1]));
        }
        let target = match self.peek_kind() {
            TokenKind::Word(Keyword::Stdin) => {
                self.bump();
                CopyTarget::Stdin
            }
            TokenKind::Word(Keyword::Stdout) => {
                self.bump();
                CopyTarget::Stdout
            }
            _ => CopyTarget::File(self.parse_string()?),
        };
        self.eat_kw(Keyword::With);
        if self.at(TokenKind::LParen) {
            for option in self.parse_generic_options()? {
                options.push(self.copy_option(&option)?);
            }
        } else {
            self.parse_legacy_copy_options(&mut options)?;
        }
        Ok(Statement::Copy(Box::new(Copy {
            source,
            direction,
            target,
            options,
        })))
    }

    /// Converts one `COPY (...)` option.
    fn copy_option(&self, option: &GenericOption) -> PResult<CopyOption> {
        Ok(match option.name.as_str() {
            "format" => {
                let format = self.option_string(option)?;
                match format.as_str() {
                    "text" => CopyOption::Format(CopyFormat::Text),
                    "csv" => CopyOption::Format(CopyFormat::Csv),
                    "binary" => CopyOption::Format(CopyFormat::Binary),
                    _ => {
                        return Err(self
                            .error_msg(
                                option.token,
                                format!("COPY format \"{format}\" not recognized"),
                            )
                            .with_kind(ParseErrorKind::InvalidParameterValue))
                    }
                }
            }
            "delimiter" => CopyOption::Delimiter(self.option_string(option)?),
            "null" => CopyOption::Null(self.option_string(option)?),
            "header" => CopyOption::Header(self.option_bool(option)?),
            "quote" => CopyOption::Quote(self.option_string(option)?),
            "escape" => CopyOption::Escape(self.option_string(option)?),
            "freeze" => CopyOption::Freeze(self.option_bool(option)?),
            "encoding" => CopyOption::Encoding(self.option_string(option)?),
            "force_quote" => match &option.value {
                Some(OptionValue::Star) => CopyOption::ForceQuote(Vec::new()),
                Some(OptionValue::Columns(c)) => CopyOption::ForceQuote(c.clone()),
                _ => {
                    return Err(self.error_msg(
                        option.token,
                        "argument to option \"force_quote\" must be a list of column names".into(),
                    ))
                }
            },
            "force_not_null" => match &option.value {
                Some(OptionValue::Columns(c)) => CopyOption::ForceNotNull(c.clone()),
                _ => {
                    return Err(self.error_msg(
                        option.token,
                        "argument to option \"force_not_null\" must be a list of column names"
                            .into(),
                    ))
                }
            },
            _ => {
                return Err(self.error_msg(
                    option.token,
                    format!("option \"{}\" not recognized", option.name),
                ))
            }
        })
    }

    /// Parses the pre-9.0 option syntax: `BINARY`, `FREEZE`, `DELIMITER [AS]
    /// 'c'`, `NULL [AS] 's'`, `CSV`, `HEADER`, `QUOTE [AS] 'c'`, `ESCAPE [AS]
    /// 'c'`, `FORCE QUOTE cols | *`, `FORCE NOT NULL cols`, `ENCODING 's'`.
    fn parse_legacy_copy_options(&mut self, options: &mut Vec<CopyOption>) -> PResult<()> {
        loop {
            let option = match self.peek_keyword() {
                Some(Keyword::Binary) => {
                    self.bump();
                    CopyOption::Format(CopyFormat::Binary)
                }
                Some(Keyword::Freeze) => {
                    self.bump();
                    CopyOption::Freeze(true)
                }
                Some(Keyword::Csv) => {
                    self.bump();
                    CopyOption::Format(CopyFormat::Csv)
                }
                Some(Keyword::Header) => {
                    self.bump();
                    CopyOption::Header(true)
                }
                Some(Keyword::Delimiter) => CopyOption::Delimiter(self.parse_legacy_string()?),
                Some(Keyword::Null) => CopyOption::Null(self.parse_legacy_string()?),
                Some(Keyword::Quote) => CopyOption::Quote(self.parse_legacy_string()?),
                Some(Keyword::Escape) => CopyOption::Escape(self.parse_legacy_string()?),
                Some(Keyword::Encoding) => CopyOption::Encoding(self.parse_legacy_string()?),
                Some(Keyword::Force) => {
                    self.bump();
                    if self.eat_kw(Keyword::Quote) {
                        if self.eat(TokenKind::Star) {
                            CopyOption::ForceQuote(Vec::new())
                        } else {
                            CopyOption::ForceQuote(self.parse_col_id_list()?)
                        }
                    } else {
                        self.expect_kw(Keyword::Not)?;
                        self.expect_kw(Keyword::Null)?;
                        CopyOption::ForceNotNull(self.parse_col_id_list()?)
                    }
                }
                _ => return Ok(()),
            };
            options.push(option);
        }
    }

    /// Parses `KEYWORD [AS] 'string'`.
    fn parse_legacy_string(&mut self) -> PResult<String> {
        self.bump();
        self.eat_kw(Keyword::As);
        self.parse_string()
    }

    /// Parses `name, ...` without parentheses.
    fn parse_col_id_list(&mut self) -> PResult<Vec<String>> {
        let mut names = vec![self.parse_col_id()?];
        while self.eat(TokenKind::Comma) {
            names.push(self.parse_col_id()?);
        }
        Ok(names)
    }

    /// Parses `table [(columns)], ...` after VACUUM or ANALYZE (possibly none).
    fn parse_vacuum_tables(&mut self) -> PResult<Vec<TableAndColumns>> {
        let mut tables = Vec::new();
        if !self.at_col_id() {
            return Ok(tables);
        }
        loop {
            let name = self.parse_object_name()?;
            let columns = if self.at(TokenKind::LParen) {
                self.parse_paren_col_ids()?
            } else {
                Vec::new()
            };
            tables.push(TableAndColumns { name, columns });
            if !self.eat(TokenKind::Comma) {
                return Ok(tables);
            }
        }
    }

    /// Parses `VACUUM (options) [tables]` or `VACUUM [FULL] [FREEZE] [VERBOSE] [ANALYZE] [tables]`.
    pub(crate) fn parse_vacuum(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::Vacuum)?;
        let mut vacuum = Vacuum::default();
        if self.at(TokenKind::LParen) {
            for option in self.parse_generic_options()? {
                let on = self.option_bool(&option)?;
                match option.name.as_str() {
                    "full" => vacuum.full = on,
                    "freeze" => vacuum.freeze = on,
                    "verbose" => vacuum.verbose = on,
                    "analyze" | "analyse" => vacuum.analyze = on,
                    "disable_page_skipping" => vacuum.disable_page_skipping = on,
                    _ => {
                        return Err(self.error_msg(
                            option.token,
                            format!("unrecognized VACUUM option \"{}\"", option.name),
                        ))
                    }
                }
            }
        } else {
            vacuum.full = self.eat_kw(Keyword::Full);
            vacuum.freeze = self.eat_kw(Keyword::Freeze);
            vacuum.verbose = self.eat_kw(Keyword::Verbose);
            vacuum.analyze = self.eat_kw(Keyword::Analyze) || self.eat_kw(Keyword::Analyse);
        }
        vacuum.tables = self.parse_vacuum_tables()?;
        Ok(Statement::Vacuum(vacuum))
    }

    /// Parses `ANALYZE [VERBOSE] [tables]` or `ANALYZE (VERBOSE [bool]) [tables]`.
    pub(crate) fn parse_analyze(&mut self) -> PResult<Statement> {
        self.bump();
        let mut analyze = Analyze::default();
        if self.at(TokenKind::LParen) {
            for option in self.parse_generic_options()? {
                let on = self.option_bool(&option)?;
                match option.name.as_str() {
                    "verbose" => analyze.verbose = on,
                    _ => {
                        return Err(self.error_msg(
                            option.token,
                            format!("unrecognized ANALYZE option \"{}\"", option.name),
                        ))
                    }
                }
            }
        } else {
            analyze.verbose = self.eat_kw(Keyword::Verbose);
        }
        analyze.tables = self.parse_vacuum_tables()?;
        Ok(Statement::Analyze(analyze))
    }

    /// Parses `EXPLAIN [(options) | ANALYZE [VERBOSE] | VERBOSE] statement`.
    pub(crate) fn parse_explain(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::Explain)?;
        let mut options = ExplainOptions::default();
        // `EXPLAIN (` opens options unless it opens a parenthesised query.
        if self.at(TokenKind::LParen)
            && !matches!(
                self.nth_kind(1),
                TokenKind::Word(Keyword::Select | Keyword::Values | Keyword::With)
                    | TokenKind::LParen
            )
        {
            for option in self.parse_generic_options()? {
                match option.name.as_str() {
                    "analyze" | "analyse" => options.analyze = self.option_bool(&option)?,
                    "verbose" => options.verbose = self.option_bool(&option)?,
                    "costs" => options.costs = self.option_bool(&option)?,
                    "buffers" => options.buffers = self.option_bool(&option)?,
                    "timing" => options.timing = self.option_bool(&option)?,
                    "summary" => options.summary = Some(self.option_bool(&option)?),
                    "format" => {
                        let format = self.option_string(&option)?;
                        options.format = match format.as_str() {
                            "text" => ExplainFormat::Text,
                            "json" => ExplainFormat::Json,
                            "yaml" => ExplainFormat::Yaml,
                            "xml" => ExplainFormat::Xml,
                            _ => {
                                return Err(self.error_msg(
                                    option.token,
                                    format!("unrecognized value for EXPLAIN option \"format\": \"{format}\""),
                                )
                                .with_kind(ParseErrorKind::InvalidParameterValue))
                            }
                        };
                    }
                    _ => {
                        return Err(self.error_msg(
                            option.token,
                            format!("unrecognized EXPLAIN option \"{}\"", option.name),
                        ))
                    }
                }
            }
        } else {
            options.analyze = self.eat_kw(Keyword::Analyze) || self.eat_kw(Keyword::Analyse);
            options.verbose = self.eat_kw(Keyword::Verbose);
        }
        let statement = match self.peek_keyword() {
            Some(
                Keyword::Select
                | Keyword::Values
                | Keyword::With
                | Keyword::Insert
                | Keyword::Update
                | Keyword::Delete
                | Keyword::Create,
            ) => self.parse_statement()?,
            _ if self.at(TokenKind::LParen) => self.parse_statement()?,
            _ => return Err(self.error()),
        };
        if let Statement::CreateTable(_) = statement {
            // Only CREATE TABLE AS is explainable; report at the statement end.
            return Err(self.error_at(self.tokens[self.pos - 1]));
        }
        Ok(Statement::Explain(Box::new(Explain { options, statement })))
    }

    /// Consumes an optional `WORK` or `TRANSACTION`.
    pub(crate) fn eat_work_or_transaction(&mut self) {
        if !self.eat_kw(Keyword::Work) {
            self.eat_kw(Keyword::Transaction);
        }
    }

    /// Parses `BEGIN [WORK | TRANSACTION] [modes]` or `START TRANSACTION [modes]`.
    pub(crate) fn parse_begin(&mut self) -> PResult<Statement> {
        if self.bump().kind == TokenKind::Word(Keyword::Start) {
            self.expect_kw(Keyword::Transaction)?;
        } else {
            self.eat_work_or_transaction();
        }
        Ok(Statement::Begin(self.parse_transaction_modes()?))
    }

    /// Parses transaction modes: `ISOLATION LEVEL ...`, `READ ONLY`, `READ
    /// WRITE`, separated by optional commas.
    fn parse_transaction_modes(&mut self) -> PResult<TransactionModes> {
        let mut modes = TransactionModes::default();
        loop {
            if self.eat_kw(Keyword::Isolation) {
                self.expect_kw(Keyword::Level)?;
                let level = match self.peek_keyword() {
                    Some(Keyword::Serializable) => {
                        self.bump();
                        IsolationLevel::Serializable
                    }
                    Some(Keyword::Repeatable) => {
                        self.bump();
                        self.expect_kw(Keyword::Read)?;
                        IsolationLevel::RepeatableRead
                    }
                    Some(Keyword::Read) => {
                        self.bump();
                        if self.eat_kw(Keyword::Committed) {
                            IsolationLevel::ReadCommitted
                        } else {
                            self.expect_kw(Keyword::Uncommitted)?;
                            IsolationLevel::ReadUncommitted
                        }
                    }
                    _ => return Err(self.error()),
                };
                modes.isolation = Some(level);
            } else if self.at_kw(Keyword::Read) {
                self.bump();
                if self.eat_kw(Keyword::Only) {
                    modes.read_only = Some(true);
                } else {
                    self.expect_kw(Keyword::Write)?;
                    modes.read_only = Some(false);
                }
            } else {
                return Ok(modes);
            }
            self.eat(TokenKind::Comma);
        }
    }

    /// Parses `SET ...` (parameters, `TIME ZONE`, `TRANSACTION`).
    pub(crate) fn parse_set(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::Set)?;
        let local = if self.eat_kw(Keyword::Local) {
            true
        } else {
            self.eat_kw(Keyword::Session);
            false
        };
        if self.eat_kw(Keyword::Transaction) {
            return Ok(Statement::SetTransaction(self.parse_transaction_modes()?));
        }
        if self.at_kw(Keyword::Time) && self.nth_is_kw(1, Keyword::Zone) {
            self.bump();
            self.bump();
            let value = if self.eat_kw(Keyword::Local) || self.eat_kw(Keyword::Default) {
                SetValue::Default
            } else {
                SetValue::Values(vec![self.parse_set_arg()?])
            };
            return Ok(Statement::Set(Set {
                local,
                name: "timezone".to_string(),
                value,
            }));
        }
        let name = self.parse_var_name()?;
        if !self.eat_kw(Keyword::To) {
            self.expect(TokenKind::Eq)?;
        }
        let value = if self.eat_kw(Keyword::Default) {
            SetValue::Default
        } else {
            let mut values = vec![self.parse_set_arg()?];
            while self.eat(TokenKind::Comma) {
                values.push(self.parse_set_arg()?);
            }
            SetValue::Values(values)
        };
        Ok(Statement::Set(Set { local, name, value }))
    }

    /// Parses a parameter name: `name` or `prefix.name`, lower-cased.
    fn parse_var_name(&mut self) -> PResult<String> {
        let mut name = self.parse_col_id()?;
        while self.eat(TokenKind::Dot) {
            name.push('.');
            name.push_str(&self.parse_col_id()?);
        }
        Ok(name)
    }

    /// Parses the parameter of SHOW or RESET: `ALL`, `TIME ZONE`,
    /// `TRANSACTION ISOLATION LEVEL` or a name.
    fn parse_show_name(&mut self) -> PResult<String> {
        if self.eat_kw(Keyword::All) {
            return Ok("all".to_string());
        }
        if self.at_kw(Keyword::Time) && self.nth_is_kw(1, Keyword::Zone) {
            self.bump();
            self.bump();
            return Ok("timezone".to_string());
        }
        if self.at_kw(Keyword::Transaction) && self.nth_is_kw(1, Keyword::Isolation) {
            self.bump();
            self.bump();
            self.expect_kw(Keyword::Level)?;
            return Ok("transaction_isolation".to_string());
        }
        self.parse_var_name()
    }

    /// Parses `SHOW name | ALL`.
    pub(crate) fn parse_show(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::Show)?;
        Ok(Statement::Show(Show {
            name: self.parse_show_name()?,
        }))
    }

    /// Parses `RESET name | ALL`.
    pub(crate) fn parse_reset(&mut self) -> PResult<Statement> {
        self.expect_kw(Keyword::Reset)?;
        Ok(Statement::Reset(Reset {
            name: self.parse_show_name()?,
        }))
    }
}
