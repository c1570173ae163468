//! `Display` for statements.

use std::fmt::{self, Display, Formatter, Write};

use super::{plain_word, Comma, Id, Ids, Str, P};
use crate::ast::*;
use crate::keywords::needs_quotes;
use crate::parser::prec;

impl Display for Statement {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Statement::Query(q) => q.fmt(f),
            Statement::Insert(i) => i.fmt(f),
            Statement::Update(u) => u.fmt(f),
            Statement::Delete(d) => d.fmt(f),
            Statement::CreateTable(c) => c.fmt(f),
            Statement::CreateTableAs(c) => {
                f.write_str(if c.temp {
                    "CREATE TEMPORARY TABLE "
                } else {
                    "CREATE TABLE "
                })?;
                if c.if_not_exists {
                    f.write_str("IF NOT EXISTS ")?;
                }
                c.name.fmt(f)?;
                if !c.columns.is_empty() {
                    write!(f, " ({})", Ids(&c.columns))?;
                }
                write_on_commit(f, c.on_commit)?;
                write!(f, " AS {}", c.query)
            }
            Statement::CreateView(c) => c.fmt(f),
            Statement::CreateSequence(c) => c.fmt(f),
            Statement::AlterSequence(c) => c.fmt(f),
            Statement::DropSequence(d) => d.fmt(f),
            Statement::DropView(d) => d.fmt(f),
            Statement::CreateFunction(c) => c.fmt(f),
            Statement::DropFunction(d) => d.fmt(f),
            Statement::AlterFunction(a) => a.fmt(f),
            Statement::CreateDomain(c) => c.fmt(f),
            Statement::DropDomain(d) => d.fmt(f),
            Statement::CreateOperator(c) => c.fmt(f),
            Statement::DropOperator(d) => d.fmt(f),
            Statement::AlterDomain(a) => a.fmt(f),
            Statement::DefineType(d) => d.fmt(f),
            Statement::DropType(d) => d.fmt(f),
            Statement::CreateCast(c) => c.fmt(f),
            Statement::DropCast(d) => d.fmt(f),
            Statement::DropTable(d) => {
                f.write_str("DROP TABLE ")?;
                if d.if_exists {
                    f.write_str("IF EXISTS ")?;
                }
                Comma(&d.names).fmt(f)?;
                if d.cascade {
                    f.write_str(" CASCADE")?;
                }
                Ok(())
            }
            Statement::Truncate(t) => {
                f.write_str("TRUNCATE TABLE ")?;
                for (i, n) in t.names.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    if t.only.get(i) == Some(&true) {
                        f.write_str("ONLY ")?;
                    }
                    n.fmt(f)?;
                }
                if t.cascade {
                    f.write_str(" CASCADE")?;
                }
                Ok(())
            }
            Statement::DeclareCursor(d) => d.fmt(f),
            Statement::Fetch(x) => x.fmt(f),
            Statement::Close(Some(c)) => write!(f, "CLOSE {}", Id(c)),
            Statement::Close(None) => f.write_str("CLOSE ALL"),
            Statement::Prepare(p) => p.fmt(f),
            Statement::Execute(e) => e.fmt(f),
            Statement::Deallocate(Some(n)) => write!(f, "DEALLOCATE {}", Id(n)),
            Statement::Deallocate(None) => f.write_str("DEALLOCATE ALL"),
            Statement::CreateIndex(c) => c.fmt(f),
            Statement::DropIndex(d) => d.fmt(f),
            Statement::AlterTable(a) => a.fmt(f),
            Statement::Reindex(r) => r.fmt(f),
            Statement::Copy(c) => c.fmt(f),
            Statement::Vacuum(v) => v.fmt(f),
            Statement::Analyze(a) => {
                f.write_str("ANALYZE")?;
                if a.verbose {
                    f.write_str(" VERBOSE")?;
                }
                write_tables(f, &a.tables)
            }
            Statement::Checkpoint => f.write_str("CHECKPOINT"),
            Statement::Comment(c) => c.fmt(f),
            Statement::Explain(e) => e.fmt(f),
            Statement::Begin(modes) => write!(f, "BEGIN{modes}"),
            Statement::Commit { chain } => {
                f.write_str(if *chain { "COMMIT AND CHAIN" } else { "COMMIT" })
            }
            Statement::Rollback { chain } => f.write_str(if *chain {
                "ROLLBACK AND CHAIN"
            } else {
                "ROLLBACK"
            }),
            Statement::SetTransaction(modes) => write!(f, "SET TRANSACTION{modes}"),
            Statement::Set(s) => s.fmt(f),
            Statement::Show(s) => write!(f, "SHOW {}", VarName(&s.name)),
            Statement::Reset(r) => write!(f, "RESET {}", VarName(&r.name)),
            Statement::Do(d) => match &d.language {
                Some(l) => write!(f, "DO LANGUAGE {} {}", Id(l), Str(&d.body)),
                None => write!(f, "DO {}", Str(&d.body)),
            },
        }
    }
}

/// Writes a parameter name (`all`, `a.b`) for SHOW/SET/RESET.
struct VarName<'a>(&'a str);

impl Display for VarName<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if self.0 == "all" {
            return f.write_str("ALL");
        }
        for (i, part) in self.0.split('.').enumerate() {
            if i > 0 {
                f.write_char('.')?;
            }
            Id(part).fmt(f)?;
        }
        Ok(())
    }
}

fn write_returning(f: &mut Formatter<'_>, returning: &[SelectItem]) -> fmt::Result {
    if returning.is_empty() {
        Ok(())
    } else {
        write!(f, " RETURNING {}", Comma(returning))
    }
}

impl Display for Insert {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "INSERT INTO {}", self.table)?;
        if let Some(alias) = &self.alias {
            write!(f, " AS {}", Id(alias))?;
        }
        if !self.columns.is_empty() {
            write!(f, " ({})", Ids(&self.columns))?;
        }
        match &self.source {
            Some(query) => write!(f, " {query}")?,
            None => f.write_str(" DEFAULT VALUES")?,
        }
        if let Some(c) = &self.on_conflict {
            write!(f, " {c}")?;
        }
        write_returning(f, &self.returning)
    }
}

/// `SET`'s list: `c = v`, and `(a, b) = (query)` for a group of
/// assignments from one query.
pub(super) fn write_assignments(f: &mut Formatter<'_>, list: &[Assignment]) -> fmt::Result {
    let mut items = Vec::with_capacity(list.len());
    for (i, a) in list.iter().enumerate() {
        match a.multi {
            None => items.push(format!("{} = {}", Id(&a.column), a.value)),
            Some((0, m)) => {
                let names: Vec<String> = list[i..(i + m).min(list.len())]
                    .iter()
                    .map(|b| Id(&b.column).to_string())
                    .collect();
                items.push(format!("({}) = {}", names.join(", "), a.value));
            }
            Some(_) => {}
        }
    }
    f.write_str(&items.join(", "))
}

impl Display for Update {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let only = if self.only { "ONLY " } else { "" };
        write!(f, "UPDATE {only}{}", self.table)?;
        if let Some(alias) = &self.alias {
            write!(f, " AS {}", Id(alias))?;
        }
        f.write_str(" SET ")?;
        write_assignments(f, &self.assignments)?;
        if !self.from.is_empty() {
            write!(f, " FROM {}", Comma(&self.from))?;
        }
        if let Some(w) = &self.where_clause {
            write!(f, " WHERE {w}")?;
        }
        write_returning(f, &self.returning)
    }
}

impl Display for Delete {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let only = if self.only { "ONLY " } else { "" };
        write!(f, "DELETE FROM {only}{}", self.table)?;
        if let Some(alias) = &self.alias {
            write!(f, " AS {}", Id(alias))?;
        }
        if !self.using.is_empty() {
            write!(f, " USING {}", Comma(&self.using))?;
        }
        if let Some(w) = &self.where_clause {
            write!(f, " WHERE {w}")?;
        }
        write_returning(f, &self.returning)
    }
}

/// ` ON COMMIT ...`, when written.
fn write_on_commit(f: &mut Formatter<'_>, on_commit: Option<OnCommit>) -> fmt::Result {
    match on_commit {
        None => Ok(()),
        Some(OnCommit::PreserveRows) => f.write_str(" ON COMMIT PRESERVE ROWS"),
        Some(OnCommit::DeleteRows) => f.write_str(" ON COMMIT DELETE ROWS"),
        Some(OnCommit::Drop) => f.write_str(" ON COMMIT DROP"),
    }
}

impl Display for CreateTable {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(if self.temp {
            "CREATE TEMPORARY TABLE "
        } else {
            "CREATE TABLE "
        })?;
        if self.if_not_exists {
            f.write_str("IF NOT EXISTS ")?;
        }
        write!(f, "{} (", self.name)?;
        let mut first = true;
        for column in &self.columns {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            write!(f, "{} {}", Id(&column.name), column.data_type)?;
            for c in &column.constraints {
                write!(f, " {c}")?;
            }
        }
        for c in &self.constraints {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            c.fmt(f)?;
        }
        f.write_char(')')?;
        if !self.inherits.is_empty() {
            f.write_str(" INHERITS (")?;
            for (i, p) in self.inherits.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                p.fmt(f)?;
            }
            f.write_char(')')?;
        }
        if !self.with_options.is_empty() {
            f.write_str(" WITH (")?;
            for (i, (name, value)) in self.with_options.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{} = {value}", Id(name))?;
            }
            f.write_char(')')?;
        }
        write_on_commit(f, self.on_commit)
    }
}

impl Display for ColumnConstraint {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            ColumnConstraint::Null => f.write_str("NULL"),
            ColumnConstraint::NotNull => f.write_str("NOT NULL"),
            ColumnConstraint::Default(e) => write!(f, "DEFAULT {}", P(e, prec::CMP + 1)),
            ColumnConstraint::PrimaryKey(n) => write!(f, "{}PRIMARY KEY", Named(n)),
            ColumnConstraint::Unique(n) => write!(f, "{}UNIQUE", Named(n)),
            ColumnConstraint::Check(c) => c.fmt(f),
            ColumnConstraint::References { name, refs } => {
                if let Some(n) = name {
                    write!(f, "CONSTRAINT {} ", Id(n))?;
                }
                refs.fmt(f)
            }
        }
    }
}

/// `CONSTRAINT name ` when a constraint's name was written, else nothing.
struct Named<'a>(&'a Option<Ident>);

impl Display for Named<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(n) => write!(f, "CONSTRAINT {} ", Id(n)),
            None => Ok(()),
        }
    }
}

impl Display for CheckConstraint {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(n) = &self.name {
            write!(f, "CONSTRAINT {} ", Id(n))?;
        }
        write!(f, "CHECK ({})", self.expr)?;
        if self.no_inherit {
            f.write_str(" NO INHERIT")?;
        }
        if self.not_valid {
            f.write_str(" NOT VALID")?;
        }
        Ok(())
    }
}

impl Display for TableConstraint {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            TableConstraint::PrimaryKey(n, cols) => {
                write!(f, "{}PRIMARY KEY ({})", Named(n), Ids(cols))
            }
            TableConstraint::Unique(n, cols) => write!(f, "{}UNIQUE ({})", Named(n), Ids(cols)),
            TableConstraint::Check(c) => c.fmt(f),
            TableConstraint::ForeignKey {
                name,
                columns,
                refs,
            } => {
                if let Some(n) = name {
                    write!(f, "CONSTRAINT {} ", Id(n))?;
                }
                write!(f, "FOREIGN KEY ({}) {refs}", Ids(columns))
            }
        }
    }
}

impl Display for SetArg {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SetArg::String(s) => Str(s).fmt(f),
            SetArg::Number(n) => f.write_str(n),
            // SET takes ON, TRUE and FALSE bare, as PostgreSQL's var_value;
            // other reserved words only quoted.
            SetArg::Word(w)
                if plain_word(w)
                    && w != "default"
                    && (!needs_quotes(w) || matches!(w.as_str(), "on" | "true" | "false")) =>
            {
                f.write_str(w)
            }
            SetArg::Word(w) => Id(w).fmt(f),
        }
    }
}

impl Display for Copy {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("COPY ")?;
        match &self.source {
            CopySource::Table { name, columns } => {
                name.fmt(f)?;
                if !columns.is_empty() {
                    write!(f, " ({})", Ids(columns))?;
                }
            }
            CopySource::Query(q) => write!(f, "({q})")?,
        }
        f.write_str(match self.direction {
            CopyDirection::From => " FROM ",
            CopyDirection::To => " TO ",
        })?;
        match &self.target {
            CopyTarget::File(name) => Str(name).fmt(f)?,
            CopyTarget::Stdin => f.write_str("STDIN")?,
            CopyTarget::Stdout => f.write_str("STDOUT")?,
        }
        if !self.options.is_empty() {
            write!(f, " WITH ({})", Comma(&self.options))?;
        }
        Ok(())
    }
}

fn on_off(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

impl Display for CopyOption {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            CopyOption::Format(format) => f.write_str(match format {
                CopyFormat::Text => "FORMAT text",
                CopyFormat::Csv => "FORMAT csv",
                CopyFormat::Binary => "FORMAT binary",
            }),
            CopyOption::Delimiter(s) => write!(f, "DELIMITER {}", Str(s)),
            CopyOption::Null(s) => write!(f, "NULL {}", Str(s)),
            CopyOption::Header(b) => write!(f, "HEADER {}", on_off(*b)),
            CopyOption::Quote(s) => write!(f, "QUOTE {}", Str(s)),
            CopyOption::Escape(s) => write!(f, "ESCAPE {}", Str(s)),
            CopyOption::Freeze(b) => write!(f, "FREEZE {}", on_off(*b)),
            CopyOption::Encoding(s) => write!(f, "ENCODING {}", Str(s)),
            CopyOption::ForceQuote(cols) if cols.is_empty() => f.write_str("FORCE_QUOTE *"),
            CopyOption::ForceQuote(cols) => write!(f, "FORCE_QUOTE ({})", Ids(cols)),
            CopyOption::ForceNotNull(cols) => write!(f, "FORCE_NOT_NULL ({})", Ids(cols)),
        }
    }
}

fn write_tables(f: &mut Formatter<'_>, tables: &[TableAndColumns]) -> fmt::Result {
    for (i, t) in tables.iter().enumerate() {
        f.write_str(if i == 0 { " " } else { ", " })?;
        t.name.fmt(f)?;
        if !t.columns.is_empty() {
            write!(f, " ({})", Ids(&t.columns))?;
        }
    }
    Ok(())
}

impl Display for Vacuum {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("VACUUM")?;
        let options: Vec<&str> = [
            (self.full, "FULL"),
            (self.freeze, "FREEZE"),
            (self.verbose, "VERBOSE"),
            (self.analyze, "ANALYZE"),
            (self.disable_page_skipping, "DISABLE_PAGE_SKIPPING"),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| *name)
        .collect();
        if !options.is_empty() {
            write!(f, " ({})", options.join(", "))?;
        }
        write_tables(f, &self.tables)
    }
}

impl Display for Explain {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("EXPLAIN")?;
        let o = &self.options;
        let d = ExplainOptions::default();
        let mut items: Vec<String> = Vec::new();
        let mut flag = |name: &str, value: bool, default: bool| {
            if value != default {
                items.push(format!("{name} {}", on_off(value)));
            }
        };
        flag("ANALYZE", o.analyze, d.analyze);
        flag("VERBOSE", o.verbose, d.verbose);
        flag("COSTS", o.costs, d.costs);
        flag("BUFFERS", o.buffers, d.buffers);
        flag("TIMING", o.timing, d.timing);
        if let Some(summary) = o.summary {
            items.push(format!("SUMMARY {}", on_off(summary)));
        }
        match o.format {
            ExplainFormat::Text => {}
            ExplainFormat::Json => items.push("FORMAT json".into()),
            ExplainFormat::Yaml => items.push("FORMAT yaml".into()),
            ExplainFormat::Xml => items.push("FORMAT xml".into()),
        }
        if !items.is_empty() {
            write!(f, " ({})", items.join(", "))?;
        }
        write!(f, " {}", self.statement)
    }
}

impl Display for TransactionModes {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(level) = self.isolation {
            f.write_str(match level {
                IsolationLevel::ReadUncommitted => " ISOLATION LEVEL READ UNCOMMITTED",
                IsolationLevel::ReadCommitted => " ISOLATION LEVEL READ COMMITTED",
                IsolationLevel::RepeatableRead => " ISOLATION LEVEL REPEATABLE READ",
                IsolationLevel::Serializable => " ISOLATION LEVEL SERIALIZABLE",
            })?;
        }
        match self.read_only {
            Some(true) => f.write_str(" READ ONLY")?,
            Some(false) => f.write_str(" READ WRITE")?,
            None => {}
        }
        match self.deferrable {
            Some(true) => f.write_str(" DEFERRABLE"),
            Some(false) => f.write_str(" NOT DEFERRABLE"),
            None => Ok(()),
        }
    }
}

impl Display for Set {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("SET ")?;
        if self.local {
            f.write_str("LOCAL ")?;
        }
        write!(f, "{} TO ", VarName(&self.name))?;
        match &self.value {
            SetValue::Default => f.write_str("DEFAULT"),
            SetValue::Values(values) => Comma(values).fmt(f),
        }
    }
}
