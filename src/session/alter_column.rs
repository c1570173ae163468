//! ALTER TABLE with column forms as the session runs it: the actions one
//! after another, each with its own command id (PostgreSQL's
//! `CommandCounterIncrement` between subcommands, so an action sees the
//! rows and definition the one before it made), the expressions of each
//! (a new column's DEFAULT, ALTER TYPE's USING) bound here with the
//! session's binder, the change made by [`crate::commands::altercol`].
//! The constraint forms and the constraints written on a new column
//! (UNIQUE, PRIMARY KEY, CHECK, REFERENCES) run as ALTER TABLE's ADD
//! CONSTRAINT actions do.

use heapdb_grammar::ast;

use super::index_ddl::with_notices;
use super::{QueryResult, Session};
use crate::catalog::{qualified_name, TableDef, ViewDef};
use crate::commands::altercol::{no_such_column, TypeChange};
use crate::err;
use crate::error::Result;
use crate::nodes::expr::Expr;
use crate::plan::bind::{at, Binder, Mode};
use crate::plan::scope::Scope;
use crate::txn::{LockMode, Snapshot};
use crate::types::cast::{cast_kind, CastContext};
use crate::types::DataType;

/// Whether `a` is one of the column forms.
pub(super) fn is_column_action(a: &ast::AlterTableAction) -> bool {
    use ast::AlterTableAction as A;
    matches!(
        a,
        A::AddColumn { .. }
            | A::DropColumn { .. }
            | A::RenameColumn { .. }
            | A::RenameTable { .. }
            | A::SetDefault { .. }
            | A::AlterType { .. }
    )
}

/// The system columns every table has (PostgreSQL's `SystemAttributeByName`).
const SYSTEM_COLUMNS: &[&str] = &["tableoid", "cmax", "xmax", "cmin", "xmin", "ctid"];

/// PostgreSQL's refusals of an action naming the system column `name`
/// (`new`: it names a column to make, else one to change; `verb`: what
/// would be done to an existing one).
fn refuse_system_column(name: &str, new: bool, verb: &str) -> Result<()> {
    if !SYSTEM_COLUMNS.contains(&name) {
        return Ok(());
    }
    Err(if new {
        err!(
            DuplicateColumn,
            "column name \"{name}\" conflicts with a system column name"
        )
    } else {
        err!(
            FeatureNotSupported,
            "cannot {verb} system column \"{name}\""
        )
    })
}

/// Whether view `v` reads column `name`: its text names it, or its output
/// has a column of that name (`SELECT *`).
fn view_reads_column(v: &ViewDef, name: &str) -> bool {
    let text = v.text.to_ascii_lowercase();
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '"';
    let named = text
        .split(|c: char| !word(c))
        .any(|w| w.trim_matches('"') == name);
    named || v.columns.iter().any(|c| c.name == name)
}

impl Session {
    /// ALTER TABLE whose actions include a column form.
    pub(super) fn alter_table_columns(&mut self, a: &ast::AlterTable) -> Result<QueryResult> {
        let qualified = qualified_name(a.table.schema.as_deref(), &a.table.name).into_owned();
        let snap = self.statement_snapshot();
        let exists = self
            .db
            .catalog
            .lookup(&self.catalog_view(&snap), &qualified)
            .is_some();
        if a.if_exists && !exists {
            let n = format!("relation \"{}\" does not exist, skipping", a.table.name);
            return Ok(with_notices("ALTER TABLE", vec![n]));
        }
        self.with_ddl(&snap, |ctx| {
            ctx.lookup_table(&qualified, LockMode::AccessExclusive)
                .map_err(|e| at(e, a.table.offset))
        })?;
        self.refuse_inherited_columns(a, &snap)?;
        let mut table = a.table.clone();
        let mut notices = Vec::new();
        // The ALTER TYPEs first, together: each USING reads the row as it
        // was before the statement (PostgreSQL binds them all against the
        // table as it was, and computes them in one rewrite).
        let retypes: Vec<&ast::AlterTableAction> = a
            .actions
            .iter()
            .filter(|x| matches!(x, ast::AlterTableAction::AlterType { .. }))
            .collect();
        if !retypes.is_empty() {
            self.alter_types(&table, &retypes)?;
        }
        for (k, action) in a.actions.iter().enumerate() {
            if matches!(action, ast::AlterTableAction::AlterType { .. }) {
                continue;
            }
            if k > 0 || !retypes.is_empty() {
                self.txn_mut().cid += 1;
            }
            if is_column_action(action) {
                self.alter_column_action(&mut table, action, &mut notices)?;
            } else {
                self.run_constraint_action(&table, action.clone(), &mut notices)?;
            }
        }
        Ok(with_notices("ALTER TABLE", notices))
    }

    /// Column forms that table inheritance does not allow (PostgreSQL's
    /// 42P16 for a column a child inherits), or that would have to recurse
    /// to the children of a parent, which is not done yet.
    fn refuse_inherited_columns(&self, a: &ast::AlterTable, snap: &Snapshot) -> Result<()> {
        use ast::AlterTableAction as A;
        let def = self.altered_table(&a.table, snap)?;
        let view = self.catalog_view(snap);
        let parents: Vec<_> = def
            .parents
            .iter()
            .filter_map(|&p| self.db.catalog.by_oid(&view, p))
            .collect();
        let inherited = |c: &str| parents.iter().any(|p| p.column_index(c).is_some());
        let has_children = def.has_subclass
            && self
                .db
                .catalog
                .tables(&view)
                .iter()
                .any(|t| t.parents.contains(&def.oid));
        for action in &a.actions {
            let (verb, column) = match action {
                A::DropColumn { name, .. } => ("drop", name),
                A::RenameColumn { old, .. } => ("rename", old),
                A::AlterType { column, .. } => ("alter", column),
                A::AddColumn { column, .. } => ("add", &column.name),
                _ => continue,
            };
            if verb != "add" && inherited(column) {
                return Err(err!(
                    InvalidTableDefinition,
                    "cannot {verb} inherited column \"{column}\""
                ));
            }
            if has_children {
                return Err(err!(
                    FeatureNotSupported,
                    "ALTER TABLE cannot {verb} a column of table \"{}\" because other tables inherit from it",
                    def.name
                )
                .with_hint("Use ALTER TABLE on each table, or recreate them."));
            }
        }
        Ok(())
    }

    /// One constraint action of ALTER TABLE on `table`.
    fn run_constraint_action(
        &mut self,
        table: &ast::ObjectName,
        action: ast::AlterTableAction,
        notices: &mut Vec<String>,
    ) -> Result<()> {
        let single = ast::AlterTable {
            if_exists: false,
            table: table.clone(),
            actions: vec![action],
        };
        notices.extend(self.alter_table_notices(&single)?);
        Ok(())
    }

    /// The definition of `table` as this command sees it.
    fn altered_table(&self, table: &ast::ObjectName, snap: &Snapshot) -> Result<TableDef> {
        let qualified = qualified_name(table.schema.as_deref(), &table.name);
        self.db
            .catalog
            .lookup(&self.catalog_view(snap), &qualified)
            .map(|t| (*t).clone())
            .ok_or_else(|| {
                at(
                    err!(UndefinedTable, "relation \"{}\" does not exist", table.name),
                    table.offset,
                )
            })
    }

    /// One column form of ALTER TABLE on `table` (renamed by RENAME TO).
    fn alter_column_action(
        &mut self,
        table: &mut ast::ObjectName,
        action: &ast::AlterTableAction,
        notices: &mut Vec<String>,
    ) -> Result<()> {
        use ast::AlterTableAction as A;
        let snap = self.statement_snapshot();
        let def = self.altered_table(table, &snap)?;
        match action {
            A::AddColumn {
                if_not_exists,
                column,
            } => {
                refuse_system_column(&column.name, true, "")?;
                if *if_not_exists && def.column_index(&column.name).is_some() {
                    notices.push(format!(
                        "column \"{}\" of relation \"{}\" already exists, skipping",
                        column.name, def.name
                    ));
                    return Ok(());
                }
                self.add_column(table, &def, column, &snap, notices)
            }
            A::DropColumn {
                if_exists,
                name,
                cascade,
                offset: _,
            } => {
                refuse_system_column(name, false, "drop")?;
                let Some(col) = def.column_index(name) else {
                    if *if_exists {
                        notices.push(format!(
                            "column \"{name}\" of relation \"{}\" does not exist, skipping",
                            def.name
                        ));
                        return Ok(());
                    }
                    return Err(no_such_column(&def, name));
                };
                self.drop_column_views(&def, name, *cascade, &snap, notices)?;
                self.with_ddl(&snap, |ctx| ctx.drop_column(&def, col, *cascade, notices))?;
                Ok(())
            }
            A::RenameColumn { old, new } => {
                refuse_system_column(old, false, "rename")?;
                if def.column_index(old).is_some() {
                    refuse_system_column(new, true, "")?;
                }
                self.with_ddl(&snap, |ctx| ctx.rename_column(&def, old, new))?;
                Ok(())
            }
            A::RenameTable { new } => {
                self.with_ddl(&snap, |ctx| ctx.rename_table(&def, new))?;
                table.name = new.clone();
                Ok(())
            }
            A::SetDefault { column, default } => {
                refuse_system_column(column, false, "alter")?;
                let col = def
                    .column_index(column)
                    .ok_or_else(|| no_such_column(&def, column))?;
                let text = match default {
                    Some(e) => {
                        let ty = def.columns[col].ty;
                        // PostgreSQL reports a bad default here without
                        // a position.
                        self.bind_default(&def.columns[col].name, &ty, e, &snap)
                            .map_err(|mut err| {
                                err.position = None;
                                err
                            })?;
                        Some(e.to_string())
                    }
                    None => None,
                };
                self.with_ddl(&snap, |ctx| ctx.set_default(&def, col, text))?;
                Ok(())
            }
            A::AlterType { .. }
            | A::AddConstraint { .. }
            | A::AddForeignKey { .. }
            | A::AddCheck(_)
            | A::RenameConstraint { .. }
            | A::SetNotNull { .. }
            | A::ValidateConstraint { .. }
            | A::SetOptions { .. }
            | A::DropConstraint { .. } => Err(err!(
                InternalError,
                "ALTER TABLE {action} is not a single column action"
            )),
        }
    }

    /// The ALTER COLUMN ... TYPE actions `retypes` of `table`, bound
    /// against the table as it is and made in one rewrite.
    fn alter_types(
        &mut self,
        table: &ast::ObjectName,
        retypes: &[&ast::AlterTableAction],
    ) -> Result<()> {
        let snap = self.statement_snapshot();
        let def = self.altered_table(table, &snap)?;
        let mut changes: Vec<TypeChange> = Vec::new();
        for action in retypes {
            let ast::AlterTableAction::AlterType {
                column,
                data_type,
                using,
                offset,
            } = action
            else {
                continue;
            };
            refuse_system_column(column, false, "alter")?;
            let col = def
                .column_index(column)
                .ok_or_else(|| at(no_such_column(&def, column), *offset))?;
            if changes.iter().any(|c| c.column == col) {
                return Err(err!(
                    FeatureNotSupported,
                    "cannot alter type of column \"{column}\" twice"
                ));
            }
            if let Some(v) = self.column_views(&def, column, &snap).first() {
                return Err(err!(
                    FeatureNotSupported,
                    "cannot alter type of a column used by a view or rule"
                )
                .with_detail(format!(
                    "rule _RETURN on view {} depends on column \"{column}\"",
                    v.name
                )));
            }
            let (ty, domain, value) =
                self.bind_new_type(&def, col, data_type, using.as_ref(), &snap)?;
            changes.push(TypeChange {
                column: col,
                ty,
                domain,
                value,
            });
        }
        self.with_ddl(&snap, |ctx| ctx.alter_types(&def, &changes))?;
        Ok(())
    }

    /// The views on `def` that read its column `name`.
    fn column_views(
        &self,
        def: &TableDef,
        name: &str,
        snap: &Snapshot,
    ) -> Vec<std::sync::Arc<ViewDef>> {
        self.db
            .catalog
            .view_dependents(&self.catalog_view(snap), def.oid)
            .into_iter()
            .filter(|v| view_reads_column(v, name))
            .collect()
    }

    /// DROP COLUMN `name` of `def` under the views reading it: refused,
    /// or with `cascade` the views go first.
    fn drop_column_views(
        &mut self,
        def: &TableDef,
        name: &str,
        cascade: bool,
        snap: &Snapshot,
        notices: &mut Vec<String>,
    ) -> Result<()> {
        let views = self.column_views(def, name, snap);
        if views.is_empty() {
            return Ok(());
        }
        if !cascade {
            let detail: Vec<String> = views
                .iter()
                .map(|v| {
                    format!(
                        "view {} depends on column {name} of table {}",
                        v.name, def.name
                    )
                })
                .collect();
            return Err(err!(
                DependentObjectsStillExist,
                "cannot drop column {name} of table {} because other objects depend on it",
                def.name
            )
            .with_detail(detail.join("\n"))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        for v in views {
            notices.push(format!("drop cascades to view {}", v.name));
            let d = ast::DropView {
                if_exists: true,
                names: vec![ast::ObjectName {
                    schema: None,
                    name: v.name.clone(),
                    offset: ast::Offset(0),
                }],
                cascade: true,
            };
            let more = self.with_ddl(snap, |ctx| ctx.drop_view(&d))?;
            notices.extend(more);
        }
        Ok(())
    }

    /// ADD COLUMN `column` to `def` (named `table`): the column and its
    /// default bound, the table rewritten, then its constraints added.
    fn add_column(
        &mut self,
        table: &ast::ObjectName,
        def: &TableDef,
        column: &ast::ColumnDef,
        snap: &Snapshot,
        notices: &mut Vec<String>,
    ) -> Result<()> {
        use ast::ColumnConstraint as C;
        let mut plain = column.clone();
        plain
            .constraints
            .retain(|k| matches!(k, C::Null | C::NotNull | C::Default(_)));
        let create = ast::CreateTable {
            temp: false,
            on_commit: None,
            if_not_exists: false,
            name: table.clone(),
            columns: vec![plain],
            constraints: Vec::new(),
            with_options: Vec::new(),
            inherits: Vec::new(),
        };
        let spec = crate::commands::createtable::define_columns(&create, &mut self.stmt_ctx(snap))?;
        let mut new = spec.columns.into_iter().next().expect("one column");
        let mut later = Vec::new();
        for k in &column.constraints {
            let offset = column.offset;
            let cols = vec![column.name.clone()];
            match k {
                C::PrimaryKey(name) | C::Unique(name) => {
                    let primary = matches!(k, C::PrimaryKey(_));
                    new.not_null |= primary;
                    later.push(ast::AlterTableAction::AddConstraint {
                        name: name.clone(),
                        primary,
                        columns: cols,
                        offset,
                    });
                }
                C::Check(c) => later.push(ast::AlterTableAction::AddCheck(c.clone())),
                C::References { name, refs } => later.push(ast::AlterTableAction::AddForeignKey {
                    name: name.clone(),
                    columns: cols,
                    refs: refs.clone(),
                    not_valid: false,
                    offset,
                }),
                C::Null | C::NotNull | C::Default(_) => {}
            }
        }
        let written = column.constraints.iter().rev().find_map(|k| match k {
            C::Default(e) => Some(e.clone()),
            _ => None,
        });
        let domain = new.domain.as_deref().and_then(|d| {
            let ctx = self.stmt_ctx(snap);
            crate::plan::PlanContext::domain(&ctx, d)
        });
        // Without a DEFAULT of its own, a column of a domain takes the
        // domain's.
        let written = match (written, &domain) {
            (None, Some(d)) => match &d.default {
                Some(text) => Some(crate::plan::modify::parse_default(text)?),
                None => None,
            },
            (w, _) => w,
        };
        let mut default = match &written {
            Some(e) => Some(self.bind_default(&new.name, &new.ty, e, snap)?),
            None => None,
        };
        if let Some(d) = &domain {
            let e = default.unwrap_or_else(|| Expr::constant(crate::types::Value::Null, new.ty));
            let mut ctx = self.stmt_ctx(snap);
            default = Some(Binder::new(&mut ctx).coerce_to_domain(e, d)?);
        }
        self.with_ddl(snap, |ctx| ctx.add_column(def, new, default))?;
        for action in later {
            self.txn_mut().cid += 1;
            self.run_constraint_action(table, action, notices)?;
        }
        Ok(())
    }

    /// Binds DEFAULT `e` of column `name` of type `ty`: no column
    /// references, its type assignable to `ty`; coerced to it.
    fn bind_default(
        &self,
        name: &str,
        ty: &DataType,
        e: &ast::Expr,
        snap: &Snapshot,
    ) -> Result<Expr> {
        let mut ctx = self.stmt_ctx(snap);
        let mut binder = Binder::new(&mut ctx);
        crate::commands::createtable::bind_default_expr(&mut binder, name, ty, e)
    }

    /// ALTER TYPE's new type and each row's new value: `using` (or the
    /// column itself) over the old columns, assigned to the new type.
    fn bind_new_type(
        &self,
        def: &TableDef,
        col: usize,
        data_type: &ast::DataType,
        using: Option<&ast::Expr>,
        snap: &Snapshot,
    ) -> Result<(DataType, Option<String>, Expr)> {
        let mut ctx = self.stmt_ctx(snap);
        let mut binder = Binder::new(&mut ctx);
        let (ty, domain) = binder.resolve_type(data_type)?;
        let name = &def.columns[col].name;
        let (value, offset) = match using {
            Some(e) => {
                let scope = Scope::of(
                    &def.name,
                    def.columns.iter().map(|c| (c.name.clone(), c.ty)),
                );
                let b = binder.bind_expr(e, &scope, &mut Mode::NoAgg("transform expressions"))?;
                (b, e.offset)
            }
            None => (Expr::column(col, def.columns[col].ty), ast::Offset(0)),
        };
        if value.ty != DataType::Unknown && !assignable(&value.ty, &ty) {
            let e = match using {
                Some(_) => err!(
                    DatatypeMismatch,
                    "result of USING clause for column \"{name}\" cannot be cast automatically to type {ty}"
                )
                .with_hint("You might need to add an explicit cast."),
                None => err!(
                    DatatypeMismatch,
                    "column \"{name}\" cannot be cast automatically to type {ty}"
                )
                .with_hint(format!("You might need to specify \"USING {name}::{ty}\".")),
            };
            return Err(e);
        }
        let value = binder.coerce(value, &ty, CastContext::Assignment, offset)?;
        Ok((ty, domain.map(|d| d.name.clone()), value))
    }
}

/// Whether a value of type `from` assigns to a column of type `to`.
fn assignable(from: &DataType, to: &DataType) -> bool {
    from == to || cast_kind(from, to).is_some_and(|k| k <= CastContext::Assignment)
}
