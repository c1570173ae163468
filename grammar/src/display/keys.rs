//! `Display` for `ON CONFLICT`, `ALTER TABLE` constraints and `REINDEX`.

use std::fmt::{self, Display, Formatter, Write};

use super::{Comma, Id, Ids};
use crate::ast::{
    AlterTable, AlterTableAction, ConflictAction, ConflictTarget, FkAction, ForeignKeyRef,
    OnConflict, Reindex,
};

impl Display for OnConflict {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("ON CONFLICT")?;
        match &self.target {
            ConflictTarget::Any => {}
            ConflictTarget::Columns(cols, predicate) => {
                write!(f, " ({})", Comma(cols))?;
                if let Some(p) = predicate {
                    write!(f, " WHERE {p}")?;
                }
            }
            ConflictTarget::Constraint(n) => write!(f, " ON CONSTRAINT {}", Id(n))?,
        }
        match &self.action {
            ConflictAction::Nothing => f.write_str(" DO NOTHING"),
            ConflictAction::Update {
                assignments,
                where_clause,
            } => {
                f.write_str(" DO UPDATE SET ")?;
                super::statements::write_assignments(f, assignments)?;
                if let Some(w) = where_clause {
                    write!(f, " WHERE {w}")?;
                }
                Ok(())
            }
        }
    }
}

impl Display for AlterTableAction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            AlterTableAction::AddConstraint {
                name,
                primary,
                columns,
                ..
            } => {
                f.write_str("ADD ")?;
                if let Some(n) = name {
                    write!(f, "CONSTRAINT {} ", Id(n))?;
                }
                let kind = if *primary { "PRIMARY KEY" } else { "UNIQUE" };
                write!(f, "{kind} ({})", Ids(columns))
            }
            AlterTableAction::AddForeignKey {
                name,
                columns,
                refs,
                not_valid,
                ..
            } => {
                f.write_str("ADD ")?;
                if let Some(n) = name {
                    write!(f, "CONSTRAINT {} ", Id(n))?;
                }
                write!(f, "FOREIGN KEY ({}) {refs}", Ids(columns))?;
                if *not_valid {
                    f.write_str(" NOT VALID")?;
                }
                Ok(())
            }
            AlterTableAction::AddCheck(c) => write!(f, "ADD {c}"),
            AlterTableAction::RenameConstraint { old, new } => {
                write!(f, "RENAME CONSTRAINT {} TO {}", Id(old), Id(new))
            }
            AlterTableAction::SetNotNull { column, set } => write!(
                f,
                "ALTER COLUMN {} {} NOT NULL",
                Id(column),
                if *set { "SET" } else { "DROP" }
            ),
            AlterTableAction::ValidateConstraint { name } => {
                write!(f, "VALIDATE CONSTRAINT {}", Id(name))
            }
            AlterTableAction::AddColumn {
                if_not_exists,
                column,
            } => {
                f.write_str("ADD COLUMN ")?;
                if *if_not_exists {
                    f.write_str("IF NOT EXISTS ")?;
                }
                write!(f, "{} {}", Id(&column.name), column.data_type)?;
                for c in &column.constraints {
                    write!(f, " {c}")?;
                }
                Ok(())
            }
            AlterTableAction::DropColumn {
                if_exists,
                name,
                cascade,
                ..
            } => {
                f.write_str("DROP COLUMN ")?;
                if *if_exists {
                    f.write_str("IF EXISTS ")?;
                }
                Id(name).fmt(f)?;
                if *cascade {
                    f.write_str(" CASCADE")?;
                }
                Ok(())
            }
            AlterTableAction::RenameColumn { old, new } => {
                write!(f, "RENAME COLUMN {} TO {}", Id(old), Id(new))
            }
            AlterTableAction::RenameTable { new } => write!(f, "RENAME TO {}", Id(new)),
            AlterTableAction::SetOptions { reset, options } => {
                f.write_str(if *reset { "RESET (" } else { "SET (" })?;
                for (i, (name, value)) in options.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    Id(name).fmt(f)?;
                    if let Some(v) = value {
                        write!(f, " = {v}")?;
                    }
                }
                f.write_char(')')
            }
            AlterTableAction::SetDefault { column, default } => match default {
                Some(e) => write!(f, "ALTER COLUMN {} SET DEFAULT {e}", Id(column)),
                None => write!(f, "ALTER COLUMN {} DROP DEFAULT", Id(column)),
            },
            AlterTableAction::AlterType {
                column,
                data_type,
                using,
                ..
            } => {
                write!(f, "ALTER COLUMN {} TYPE {data_type}", Id(column))?;
                if let Some(e) = using {
                    write!(f, " USING {e}")?;
                }
                Ok(())
            }
            AlterTableAction::DropConstraint {
                if_exists,
                name,
                cascade,
            } => {
                f.write_str("DROP CONSTRAINT ")?;
                if *if_exists {
                    f.write_str("IF EXISTS ")?;
                }
                Id(name).fmt(f)?;
                if *cascade {
                    f.write_str(" CASCADE")?;
                }
                Ok(())
            }
        }
    }
}

impl Display for AlterTable {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("ALTER TABLE ")?;
        if self.if_exists {
            f.write_str("IF EXISTS ")?;
        }
        write!(f, "{} {}", self.table, Comma(&self.actions))
    }
}

impl Display for Reindex {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let kind = if self.table { "TABLE" } else { "INDEX" };
        write!(f, "REINDEX {kind} {}", self.name)
    }
}

impl Display for ForeignKeyRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "REFERENCES {}", self.table)?;
        if !self.columns.is_empty() {
            write!(f, " ({})", Ids(&self.columns))?;
        }
        if self.match_full {
            f.write_str(" MATCH FULL")?;
        }
        for (verb, action) in [("DELETE", &self.on_delete), ("UPDATE", &self.on_update)] {
            if *action != FkAction::NoAction {
                write!(f, " ON {verb} {action}")?;
            }
        }
        if self.deferrable {
            f.write_str(" DEFERRABLE")?;
        }
        if self.initially_deferred {
            f.write_str(" INITIALLY DEFERRED")?;
        }
        Ok(())
    }
}

impl Display for FkAction {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let (word, cols) = match self {
            FkAction::NoAction => return f.write_str("NO ACTION"),
            FkAction::Restrict => return f.write_str("RESTRICT"),
            FkAction::Cascade => return f.write_str("CASCADE"),
            FkAction::SetNull(c) => ("SET NULL", c),
            FkAction::SetDefault(c) => ("SET DEFAULT", c),
        };
        f.write_str(word)?;
        if !cols.is_empty() {
            write!(f, " ({})", Ids(cols))?;
        }
        Ok(())
    }
}
