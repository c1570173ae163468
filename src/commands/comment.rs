//! `COMMENT ON object IS 'text' | NULL`: sets or removes the description
//! of a table, column, index, view, sequence, function, procedure,
//! operator, type, domain, or constraint of a table or domain.
//!
//! A description is a field of its object's catalog entry, so setting one
//! writes a new version of that entry in the statement's transaction: it
//! is rolled back with it, written to the catalog file before its commit
//! like any other catalog change, dropped with its object and kept across
//! a rename. `IS NULL` and `IS ''` remove it. Errors are PostgreSQL's for
//! a missing object and for an object of the wrong kind; a table's entry
//! is changed under a `SHARE UPDATE EXCLUSIVE` lock, as PostgreSQL's.

use std::sync::Arc;

use heapdb_grammar::ast::{self, CommentObject, CommentRelKind};

use super::context::DdlContext;
use crate::catalog::{qualified_name, SequenceDef, TableDef, ViewDef};
use crate::err;
use crate::error::Result;
use crate::txn::LockMode;

/// A relation a name finds.
enum Relation {
    Table(Arc<TableDef>),
    /// An index, with its table.
    Index(Arc<TableDef>),
    View(Arc<ViewDef>),
    Sequence(Arc<SequenceDef>),
}

/// Fails for a schema other than `public` and `pg_temp` (heapdb has no
/// other).
fn check_schema(name: &ast::ObjectName) -> Result<()> {
    match name.schema.as_deref() {
        None | Some("public" | "pg_temp") => Ok(()),
        Some(s) => Err(err!(InvalidSchemaName, "schema \"{s}\" does not exist")),
    }
}

impl DdlContext<'_> {
    /// COMMENT ON (see the module doc).
    pub fn comment(&mut self, c: &ast::Comment) -> Result<()> {
        let text = c.text.clone().filter(|t| !t.is_empty());
        match &c.object {
            CommentObject::Relation(kind, name) => self.comment_relation(*kind, name, text)?,
            CommentObject::Column(names) => self.comment_column(names, text)?,
            CommentObject::Routine(kind, r) => {
                let f = self.routine(*kind, r)?;
                let mut def = (*f).clone();
                def.comment = text;
                let cv = self.view();
                self.catalog
                    .replace_function(&cv, self.xid, f.oid, Some(def))?;
            }
            CommentObject::Type(name) => self.comment_type(name, text, false)?,
            CommentObject::Domain(name) => self.comment_type(name, text, true)?,
            CommentObject::Constraint(con, table) => {
                self.comment_table_constraint(con, table, text)?
            }
            CommentObject::DomainConstraint(con, domain) => {
                self.comment_domain_constraint(con, domain, text)?
            }
            CommentObject::Operator(op) => self.comment_operator(op, text)?,
            CommentObject::Aggregate(name, args) => {
                return Err(self.no_such_aggregate(name, args.as_deref()))
            }
        }
        *self.catalog_changed = true;
        Ok(())
    }

    /// The relation `name` finds, of whatever kind; `relation "x" does not
    /// exist` when none.
    fn find_relation(&self, name: &ast::ObjectName) -> Result<Relation> {
        check_schema(name)?;
        let cv = self.view();
        let qualified = qualified_name(name.schema.as_deref(), &name.name);
        if let Some(t) = self.catalog.lookup(&cv, &qualified) {
            return Ok(Relation::Table(t));
        }
        if name.schema.as_deref() != Some("pg_temp") {
            if let Some(v) = self.catalog.lookup_view(&cv, &name.name) {
                return Ok(Relation::View(v));
            }
            if let Some(s) = self.catalog.lookup_sequence(&cv, &name.name) {
                return Ok(Relation::Sequence(s));
            }
        }
        for t in self.catalog.tables(&cv) {
            if t.indexes.iter().any(|i| i.name == *name.name) {
                return Ok(Relation::Index(t));
            }
        }
        Err(err!(
            UndefinedTable,
            "relation \"{}\" does not exist",
            name.name
        ))
    }

    /// Table `def` again, locked against concurrent DDL, as the statement
    /// sees it now.
    fn locked_table(&self, def: &TableDef) -> Result<Arc<TableDef>> {
        let name = self.catalog.qualified(def);
        self.lookup_table(&name, LockMode::ShareUpdateExclusive)
    }

    /// Writes `def` as the new version of its table.
    fn replace_commented(&self, def: TableDef) -> Result<()> {
        let cv = self.view();
        self.catalog.replace(&cv, self.xid, def.oid, Some(def))
    }

    fn comment_relation(
        &mut self,
        kind: CommentRelKind,
        name: &ast::ObjectName,
        text: Option<String>,
    ) -> Result<()> {
        let rel = self.find_relation(name)?;
        let cv = self.view();
        match (kind, rel) {
            (CommentRelKind::Table, Relation::Table(t)) => {
                let mut def = (*self.locked_table(&t)?).clone();
                def.comment = text;
                self.replace_commented(def)
            }
            (CommentRelKind::Index, Relation::Index(t)) => {
                let mut def = (*self.locked_table(&t)?).clone();
                let Some(ix) = def.indexes.iter_mut().find(|i| i.name == *name.name) else {
                    return Err(err!(
                        UndefinedTable,
                        "relation \"{}\" does not exist",
                        name.name
                    ));
                };
                ix.comment = text;
                self.replace_commented(def)
            }
            (CommentRelKind::View, Relation::View(v)) => {
                let mut def = (*v).clone();
                def.comment = text;
                self.catalog.replace_view(&cv, self.xid, v.oid, Some(def))
            }
            (CommentRelKind::Sequence, Relation::Sequence(s)) => {
                let mut def = (*s).clone();
                def.comment = text;
                self.catalog
                    .replace_sequence(&cv, self.xid, s.oid, Some(def))
            }
            (kind, _) => {
                let what = match kind {
                    CommentRelKind::Table => "a table",
                    CommentRelKind::Index => "an index",
                    CommentRelKind::View => "a view",
                    CommentRelKind::Sequence => "a sequence",
                };
                Err(err!(WrongObjectType, "\"{}\" is not {what}", name.name))
            }
        }
    }

    /// COMMENT ON COLUMN `[schema.]table.column` of a table or view.
    fn comment_column(&mut self, names: &[String], text: Option<String>) -> Result<()> {
        let (rel, column) = match names {
            [_] => return Err(err!(SyntaxError, "column name must be qualified")),
            [t, c] => (ast::ObjectName::new(t.clone()), c),
            [s, t, c] => {
                let mut n = ast::ObjectName::new(t.clone());
                n.schema = Some(s.clone());
                (n, c)
            }
            _ => {
                return Err(err!(
                    FeatureNotSupported,
                    "cross-database references are not implemented: \"{}\"",
                    names[..names.len() - 1].join(".")
                ))
            }
        };
        let missing = || {
            err!(
                UndefinedColumn,
                "column \"{column}\" of relation \"{}\" does not exist",
                rel.name
            )
        };
        match self.find_relation(&rel)? {
            Relation::Table(t) => {
                let mut def = (*self.locked_table(&t)?).clone();
                let i = def.column_index(column).ok_or_else(missing)?;
                def.columns[i].comment = text;
                self.replace_commented(def)
            }
            Relation::View(v) => {
                let mut def = (*v).clone();
                let c = def
                    .columns
                    .iter_mut()
                    .find(|c| c.name == *column)
                    .ok_or_else(missing)?;
                c.comment = text;
                let cv = self.view();
                self.catalog.replace_view(&cv, self.xid, v.oid, Some(def))
            }
            other => {
                let what = match other {
                    Relation::Index(_) => "indexes",
                    _ => "sequences",
                };
                Err(err!(
                    WrongObjectType,
                    "cannot set comment on relation \"{}\"",
                    rel.name
                )
                .with_detail(format!("This operation is not supported for {what}.")))
            }
        }
    }

    /// COMMENT ON TYPE (a domain or a base type) or DOMAIN.
    fn comment_type(
        &mut self,
        name: &ast::ObjectName,
        text: Option<String>,
        domain_only: bool,
    ) -> Result<()> {
        check_schema(name)?;
        let cv = self.view();
        if let Some(d) = self.catalog.lookup_domain(&cv, &name.name) {
            let mut def = (*d).clone();
            def.comment = text;
            return self.catalog.replace_domain(&cv, self.xid, d.oid, Some(def));
        }
        match self.catalog.lookup_base_type(&cv, &name.name) {
            Some(_) if domain_only => Err(not_a_domain(&name.name)),
            Some(t) => {
                let mut def = (*t).clone();
                def.comment = text;
                self.catalog
                    .replace_base_type(&cv, self.xid, t.oid, Some(def))
            }
            None if self.arg_type(&builtin_type(name)).is_ok() => {
                if domain_only {
                    Err(not_a_domain(&name.name))
                } else {
                    Err(err!(
                        FeatureNotSupported,
                        "cannot set comment on built-in type \"{}\"",
                        name.name
                    ))
                }
            }
            None => Err(err!(
                UndefinedObject,
                "type \"{}\" does not exist",
                name.name
            )),
        }
    }

    /// COMMENT ON CONSTRAINT `con` ON `table`: a CHECK, a PRIMARY KEY or
    /// UNIQUE constraint (its index's), or a FOREIGN KEY.
    fn comment_table_constraint(
        &mut self,
        con: &str,
        table: &ast::ObjectName,
        text: Option<String>,
    ) -> Result<()> {
        let missing = || {
            err!(
                UndefinedObject,
                "constraint \"{con}\" for table \"{}\" does not exist",
                table.name
            )
        };
        let t = match self.find_relation(table)? {
            Relation::Table(t) => self.locked_table(&t)?,
            _ => return Err(missing()),
        };
        let mut def = (*t).clone();
        if let Some(c) = def.checks.iter_mut().find(|c| c.name == con) {
            c.comment = text;
            return self.replace_commented(def);
        }
        if let Some(ix) = def
            .indexes
            .iter_mut()
            .find(|i| i.constraint && i.name == con)
        {
            ix.constraint_comment = text;
            return self.replace_commented(def);
        }
        let cv = self.view();
        let (fkeys, _) = self.catalog.foreign_keys_of(&cv, t.oid);
        let fk = fkeys.iter().find(|f| f.name == con).ok_or_else(missing)?;
        let mut new = (**fk).clone();
        new.comment = text;
        self.catalog.replace_foreign_key(&cv, self.xid, fk.oid, new)
    }

    /// COMMENT ON CONSTRAINT `con` ON DOMAIN `domain`.
    fn comment_domain_constraint(
        &mut self,
        con: &str,
        domain: &ast::ObjectName,
        text: Option<String>,
    ) -> Result<()> {
        check_schema(domain)?;
        let cv = self.view();
        let Some(d) = self.catalog.lookup_domain(&cv, &domain.name) else {
            let known = self.catalog.lookup_base_type(&cv, &domain.name).is_some()
                || self.arg_type(&builtin_type(domain)).is_ok();
            return Err(if known {
                not_a_domain(&domain.name)
            } else {
                err!(UndefinedObject, "type \"{}\" does not exist", domain.name)
            });
        };
        let mut def = (*d).clone();
        let c = def
            .checks
            .iter_mut()
            .find(|c| c.name == con)
            .ok_or_else(|| {
                err!(
                    UndefinedObject,
                    "constraint \"{con}\" for domain {} does not exist",
                    d.name
                )
            })?;
        c.comment = text;
        self.catalog.replace_domain(&cv, self.xid, d.oid, Some(def))
    }
}

impl DdlContext<'_> {
    /// COMMENT ON OPERATOR `op (left, right)`.
    fn comment_operator(&mut self, r: &ast::OperatorRef, text: Option<String>) -> Result<()> {
        let left = r.left.as_ref().map(|t| self.arg_type(t)).transpose()?;
        let right = self.arg_type(&r.right)?;
        let cv = self.view();
        let Some(o) = self
            .catalog
            .lookup_operators(&cv, &r.name)
            .into_iter()
            .find(|o| super::operatorcmds::same_operands(o, left, right))
        else {
            let left = left.map_or(String::new(), |t| format!("{t} "));
            return Err(err!(
                UndefinedFunction,
                "operator does not exist: {left}{} {right}",
                r.name
            ));
        };
        let mut def = (*o).clone();
        def.comment = text;
        self.catalog.replace_operator(&cv, self.xid, o.oid, def)
    }

    /// The error of COMMENT ON AGGREGATE: heapdb has no user-defined
    /// aggregates, so every one named is missing (after its argument
    /// types are resolved, as PostgreSQL resolves them first).
    fn no_such_aggregate(
        &self,
        name: &ast::ObjectName,
        args: Option<&[ast::FunctionArg]>,
    ) -> crate::error::Error {
        let args = match args {
            None => "*".to_string(),
            Some(args) => {
                let types: Result<Vec<_>> =
                    args.iter().map(|a| self.arg_type(&a.data_type)).collect();
                match types {
                    Ok(t) => super::functioncmds::type_list(&t),
                    Err(e) => return e,
                }
            }
        };
        err!(
            UndefinedFunction,
            "aggregate {}({args}) does not exist",
            name.name
        )
    }
}

fn not_a_domain(name: &str) -> crate::error::Error {
    err!(WrongObjectType, "\"{name}\" is not a domain")
}

/// `name` as a type name, to ask whether it is a built-in type.
fn builtin_type(name: &ast::ObjectName) -> ast::DataType {
    ast::DataType::Named(name.name.clone())
}
