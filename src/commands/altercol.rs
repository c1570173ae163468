//! ALTER TABLE's column forms, as PostgreSQL's `tablecmds.c`: ADD COLUMN
//! (`ATExecAddColumn`), DROP COLUMN (`ATExecDropColumn`), RENAME COLUMN
//! (`renameatt`), RENAME TO (`RenameRelation`), SET/DROP DEFAULT
//! (`ATExecColumnDefault`) and ALTER COLUMN TYPE (`ATExecAlterColumnType`),
//! given a [`DdlContext`]; the expressions (defaults, USING) come bound
//! from the caller, which has the session's binder.
//!
//! A change of what the rows store (ADD, DROP, TYPE) rewrites the table,
//! as PostgreSQL's `ATRewriteTable`: every live row is read, its new form
//! computed ([`NewValue`]) and checked (NOT NULL, validated CHECKs), and
//! written into a fresh relation file; every index is built anew from it;
//! the catalog then points at the new files. The old files are removed at
//! commit and the new ones at abort, so a failed statement, a ROLLBACK or
//! a crash leaves the old table whole, and other transactions read the old
//! definition and files until the commit.
//!
//! Invariants kept: an index, check or foreign key never names a column
//! that is gone (those reading a dropped column go with it, the others are
//! renumbered and their stored conditions bound again over the new
//! columns); a renamed column's or table's conditions and views are
//! stored with the new name.

use super::context::DdlContext;
use crate::catalog::{ColumnDef, ForeignKeyDef, TableDef, ViewDef};
use crate::err;
use crate::error::Result;
use crate::exec::modify::{validate_rows, RowWriter};
use crate::nodes::expr::Expr;
use crate::storage::StrategyKind;
use crate::types::{DataType, Value};
use crate::vector::{Batch, Vector};

/// Rows read and written per batch by a rewrite.
const REWRITE_BATCH: usize = 1024;

/// How a rewrite computes one column of the new table from a row of the
/// old one.
#[derive(Debug, Clone)]
pub enum NewValue {
    /// The old table's column, unchanged.
    Old(usize),
    /// An expression over the old table's columns (a default, a USING
    /// expression, a cast), of the new column's type.
    Expr(Expr),
}

/// One ALTER COLUMN ... TYPE, bound.
#[derive(Debug, Clone)]
pub struct TypeChange {
    /// The column's position.
    pub column: usize,
    /// Its new type.
    pub ty: DataType,
    /// The domain of that type, if it is one.
    pub domain: Option<String>,
    /// Each row's new value, over the old columns, of type `ty`.
    pub value: Expr,
}

/// `column "x" of relation "t" does not exist` (42703).
pub fn no_such_column(table: &TableDef, name: &str) -> crate::error::Error {
    err!(
        UndefinedColumn,
        "column \"{name}\" of relation \"{}\" does not exist",
        table.name
    )
}

/// Column position `i` once column `gone` is removed.
fn shifted(i: usize, gone: usize) -> Option<usize> {
    match i.cmp(&gone) {
        std::cmp::Ordering::Less => Some(i),
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => Some(i - 1),
    }
}

impl DdlContext<'_> {
    /// ADD COLUMN `column` to `def`, each existing row given `default`
    /// (evaluated per row; NULL when `None`). Returns the new definition.
    pub fn add_column(
        &mut self,
        def: &TableDef,
        column: ColumnDef,
        default: Option<Expr>,
    ) -> Result<TableDef> {
        if def.column_index(&column.name).is_some() {
            return Err(err!(
                DuplicateColumn,
                "column \"{}\" of relation \"{}\" already exists",
                column.name,
                def.name
            ));
        }
        let ty = column.ty;
        let mut new = def.clone();
        new.columns.push(column);
        let mut values: Vec<NewValue> = (0..def.columns.len()).map(NewValue::Old).collect();
        values.push(NewValue::Expr(
            default.unwrap_or_else(|| Expr::constant(Value::Null, ty)),
        ));
        self.rewrite(def, new, &values)
    }

    /// DROP COLUMN `col` of `def`: its indexes, checks and foreign keys go
    /// too (a key other tables reference only with `cascade`; the NOTICEs
    /// go to `notices`). Returns the new definition.
    pub fn drop_column(
        &mut self,
        def: &TableDef,
        col: usize,
        cascade: bool,
        notices: &mut Vec<String>,
    ) -> Result<TableDef> {
        let mut new = def.clone();
        new.columns.remove(col);
        new.stats = None;
        let (own, referencing) = self.catalog.foreign_keys_of(&self.view(), def.oid);
        let mut gone_indexes = Vec::new();
        new.indexes.retain(|ix| {
            let reads =
                ix.stored_columns().any(|c| c == col) || ix.predicate_columns().contains(&col);
            if reads {
                gone_indexes.push(ix.clone());
            }
            !reads
        });
        for ix in &gone_indexes {
            let deps: Vec<_> = referencing
                .iter()
                .filter(|f| f.ref_index == ix.oid && f.table != def.oid)
                .collect();
            if !deps.is_empty() && !cascade {
                let detail: Vec<String> = deps
                    .iter()
                    .map(|f| {
                        format!(
                            "constraint {} on table {} depends on index {}",
                            f.name,
                            self.table_name(f.table),
                            ix.name
                        )
                    })
                    .collect();
                return Err(err!(
                    DependentObjectsStillExist,
                    "cannot drop column {} of table {} because other objects depend on it",
                    def.columns[col].name,
                    def.name
                )
                .with_detail(detail.join("\n"))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
            }
            for f in deps {
                notices.push(format!(
                    "drop cascades to constraint {} on table {}",
                    f.name,
                    self.table_name(f.table)
                ));
            }
        }
        for ix in new.indexes.iter_mut() {
            for k in ix.columns.iter_mut() {
                k.column = shifted(k.column, col).expect("kept indexes skip the column");
            }
            for k in ix.include.iter_mut() {
                *k = shifted(*k, col).expect("kept indexes skip the column");
            }
        }
        new.checks
            .retain(|c| !crate::plan::check::reads_column(c, col));
        self.rebind_conditions(&mut new)?;
        self.drop_column_foreign_keys(def, col, &gone_indexes, &own, &referencing);
        let values: Vec<NewValue> = (0..def.columns.len())
            .filter(|&c| c != col)
            .map(NewValue::Old)
            .collect();
        let new = self.rewrite_keeping(def, new, &values, &gone_indexes)?;
        Ok(new)
    }

    /// The name of table `oid` (empty when it is gone).
    fn table_name(&self, oid: u32) -> String {
        self.catalog
            .by_oid(&self.view(), oid)
            .map_or_else(String::new, |t| t.name.clone())
    }

    /// The foreign keys of DROP COLUMN `col` of `def`: those over the
    /// column or through an index that goes (`gone`) are dropped, the
    /// others renumbered.
    fn drop_column_foreign_keys(
        &mut self,
        def: &TableDef,
        col: usize,
        gone: &[crate::catalog::IndexDef],
        own: &[std::sync::Arc<ForeignKeyDef>],
        referencing: &[std::sync::Arc<ForeignKeyDef>],
    ) {
        let mut seen = std::collections::HashSet::new();
        for f in own.iter().chain(referencing) {
            if !seen.insert(f.oid) {
                continue;
            }
            let mine = f.table == def.oid;
            let referenced = f.ref_table == def.oid;
            let drops = (mine && f.columns.contains(&col))
                || (referenced
                    && (f.ref_columns.contains(&col) || gone.iter().any(|i| i.oid == f.ref_index)));
            let view = self.view();
            self.catalog.drop_foreign_key(&view, self.xid, f.oid);
            *self.catalog_changed = true;
            if drops {
                continue;
            }
            let mut kept = (**f).clone();
            if mine {
                for c in kept.columns.iter_mut() {
                    *c = shifted(*c, col).expect("kept keys skip the column");
                }
            }
            if referenced {
                for c in kept.ref_columns.iter_mut() {
                    *c = shifted(*c, col).expect("kept keys skip the column");
                }
            }
            self.catalog.add_foreign_key(self.xid, kept);
        }
    }

    /// Binds every check and partial-index predicate of `def` again from
    /// its stored text, over `def`'s columns as they are now.
    fn rebind_conditions(&self, def: &mut TableDef) -> Result<()> {
        let snapshot = def.clone();
        for c in def.checks.iter_mut() {
            c.expr = crate::plan::check::bind_stored(&snapshot, &c.text)?;
        }
        for ix in def.indexes.iter_mut() {
            if let Some(p) = &ix.predicate {
                let mut p2 = (**p).clone();
                p2.expr = crate::plan::check::bind_stored(&snapshot, &p2.text)?;
                ix.predicate = Some(std::sync::Arc::new(p2));
            }
        }
        Ok(())
    }

    /// RENAME COLUMN `old` TO `new` of `def`: the checks' and predicates'
    /// stored texts are written again with the new name.
    pub fn rename_column(&mut self, def: &TableDef, old: &str, new: &str) -> Result<TableDef> {
        let Some(col) = def.column_index(old) else {
            return Err(err!(UndefinedColumn, "column \"{old}\" does not exist"));
        };
        if def.column_index(new).is_some() {
            return Err(err!(
                DuplicateColumn,
                "column \"{new}\" of relation \"{}\" already exists",
                def.name
            ));
        }
        let mut out = def.clone();
        out.columns[col].name = new.to_string();
        let names: Vec<String> = out.columns.iter().map(|c| c.name.clone()).collect();
        for c in out.checks.iter_mut() {
            c.text = crate::plan::indexpred::pretty(&c.expr, &names);
        }
        for ix in out.indexes.iter_mut() {
            if let Some(p) = &ix.predicate {
                let mut p2 = (**p).clone();
                p2.text = crate::plan::indexpred::pretty(&p2.expr, &names);
                ix.predicate = Some(std::sync::Arc::new(p2));
            }
        }
        // The texts must read back as the same conditions.
        let mut check = out.clone();
        self.rebind_conditions(&mut check)?;
        self.replace_def(&out)?;
        self.rename_in_views(def.oid, old, new)?;
        Ok(out)
    }

    /// The views reading table `table` whose query names `old` (the
    /// table or one of its columns), stored with `new` there instead, as
    /// PostgreSQL's views, which hold the objects themselves, read on
    /// after a rename. Their output columns keep their names.
    fn rename_in_views(&mut self, table: u32, old: &str, new: &str) -> Result<()> {
        for v in self.catalog.view_dependents(&self.view(), table) {
            let text = rename_identifier(&v.text, old, new);
            if text == v.text {
                continue;
            }
            let mut renamed = ViewDef::new(
                v.oid,
                v.name.clone(),
                v.columns.clone(),
                text,
                v.depends_on.clone(),
            )?
            .with_check_option(v.check_option);
            renamed.comment = v.comment.clone();
            self.catalog
                .replace_view(&self.view(), self.xid, v.oid, Some(renamed))?;
            *self.catalog_changed = true;
        }
        Ok(())
    }

    /// RENAME TO `new` of `def`.
    pub fn rename_table(&mut self, def: &TableDef, new: &str) -> Result<TableDef> {
        let view = self.view();
        if self.catalog.relation_name_taken(&view, new) || self.catalog.any_view_named(new) {
            return Err(err!(DuplicateTable, "relation \"{new}\" already exists"));
        }
        let mut out = def.clone();
        out.name = new.to_string();
        self.replace_def(&out)?;
        self.rename_in_views(def.oid, &def.name, new)?;
        Ok(out)
    }

    /// ALTER COLUMN `col` SET DEFAULT (the text of a bound, checked
    /// expression) or DROP DEFAULT (`None`) of `def`.
    pub fn set_default(
        &mut self,
        def: &TableDef,
        col: usize,
        default: Option<String>,
    ) -> Result<TableDef> {
        let mut out = def.clone();
        out.columns[col].default = default;
        self.replace_def(&out)?;
        Ok(out)
    }

    /// ALTER COLUMN ... TYPE of `def`, for each change its column, new
    /// type (of a domain, perhaps) and each row's new value (over the old
    /// columns, of the new type): one rewrite for all of them, every new
    /// value computed from the row as it was.
    pub fn alter_types(&mut self, def: &TableDef, changes: &[TypeChange]) -> Result<TableDef> {
        let mut new = def.clone();
        new.stats = None;
        let mut values: Vec<NewValue> = (0..def.columns.len()).map(NewValue::Old).collect();
        for c in changes {
            new.columns[c.column].ty = c.ty;
            new.columns[c.column].domain = c.domain.clone();
            values[c.column] = NewValue::Expr(c.value.clone());
        }
        self.rebind_conditions(&mut new)?;
        self.check_key_types(&new)?;
        self.rewrite(def, new, &values)
    }

    /// PostgreSQL's refusal of a type change that leaves a foreign key of
    /// `new` (referencing or referenced) over types it cannot compare.
    fn check_key_types(&self, new: &TableDef) -> Result<()> {
        let (own, referencing) = self.catalog.foreign_keys_of(&self.view(), new.oid);
        for f in own.iter().chain(&referencing) {
            let side = |oid: u32| {
                if oid == new.oid {
                    Some(new.clone())
                } else {
                    self.catalog.by_oid(&self.view(), oid).map(|t| (*t).clone())
                }
            };
            let (Some(child), Some(parent)) = (side(f.table), side(f.ref_table)) else {
                continue;
            };
            for (&c, &r) in f.columns.iter().zip(&f.ref_columns) {
                let (a, b) = (&child.columns[c], &parent.columns[r]);
                if !super::fkey::comparable(&a.ty, &b.ty) {
                    return Err(err!(
                        DatatypeMismatch,
                        "foreign key constraint \"{}\" cannot be implemented",
                        f.name
                    )
                    .with_detail(format!(
                        "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
                        a.name, b.name, a.ty, b.ty
                    )));
                }
            }
        }
        Ok(())
    }

    /// Writes `def` as its table's new version.
    fn replace_def(&mut self, def: &TableDef) -> Result<()> {
        self.catalog
            .replace(&self.view(), self.xid, def.oid, Some(def.clone()))?;
        *self.catalog_changed = true;
        Ok(())
    }

    /// Rewrites table `old` as `new` (its columns computed by `values`),
    /// its indexes built anew. Returns `new` as the catalog now has it.
    fn rewrite(&mut self, old: &TableDef, new: TableDef, values: &[NewValue]) -> Result<TableDef> {
        self.rewrite_keeping(old, new, values, &[])
    }

    /// [`Self::rewrite`], where `old`'s indexes `dropped` are not in `new`
    /// (their files go at commit too).
    fn rewrite_keeping(
        &mut self,
        old: &TableDef,
        mut new: TableDef,
        values: &[NewValue],
        dropped: &[crate::catalog::IndexDef],
    ) -> Result<TableDef> {
        let old_rel = self.relation(old.relfilenode)?;
        let fresh = self.fresh_relfilenode();
        let new_rel = self.create_heap(fresh)?;
        new_rel.set_fillfactor(new.fillfactor());
        new.relfilenode = fresh;
        new.stats = None;
        // The rows are checked before they are formed; the writer forms
        // them without the checks (a NOT VALID one may fail on old rows).
        let mut unchecked = new.clone();
        unchecked.checks.clear();
        let mut writer = RowWriter::new(&unchecked)?;
        let mut ring = Some(
            self.pool
                .ring_with(StrategyKind::BulkWrite, &self.ring_sizes),
        );
        let (xid, cid) = (self.xid, self.cid);
        let mut chunk: Vec<Vec<Value>> = Vec::new();
        let mut flush = |chunk: &mut Vec<Vec<Value>>| -> Result<()> {
            if chunk.is_empty() {
                return Ok(());
            }
            let rows = convert(old, &new, values, chunk)?;
            chunk.clear();
            validate_rows(&new, &rows)?;
            let batch = rows_batch(&new, &rows);
            let (mut data, mut lens) = (Vec::new(), Vec::new());
            for i in 0..batch.len {
                writer.form(&batch, i, 0)?;
                data.extend_from_slice(&writer.tuple);
                lens.push(writer.tuple.len() as u16);
            }
            new_rel.multi_insert(&data, &lens, xid, cid, ring.as_mut(), None)
        };
        crate::exec::fkey::live_rows_of(xid, old, &old_rel, &mut |row| {
            chunk.push(row.to_vec());
            if chunk.len() >= REWRITE_BATCH {
                flush(&mut chunk)?;
            }
            Ok(())
        })?;
        flush(&mut chunk)?;
        // The new rows are this command's own: the builds must see them.
        let snap = self.snapshot.with_cid(self.cid + 1);
        for i in 0..new.indexes.len() {
            let file = self.fresh_relfilenode();
            self.log_relation_create(file)?;
            self.drop_on_abort.push(file);
            let mut ix = new.indexes[i].clone();
            ix.relfilenode = file;
            self.build_index_as_of(&new, &ix, &snap)?;
            let prev = std::mem::replace(&mut new.indexes[i], ix).relfilenode;
            self.drop_on_commit.push(prev);
        }
        self.drop_on_commit
            .extend(dropped.iter().map(|i| i.relfilenode));
        self.drop_on_commit.push(old.relfilenode);
        self.replace_def(&new)?;
        Ok(new)
    }
}

/// `text` (a view's query) with each identifier naming `old` written as
/// `new`: not a function's name (followed by `(`) nor a type's (after
/// `::`).
fn rename_identifier(text: &str, old: &str, new: &str) -> String {
    use heapdb_grammar::lexer::{tokenize, TokenKind};
    let tokens = tokenize(text);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (i, t) in tokens.iter().enumerate() {
        let slice = &text[t.start..t.end];
        let name = match t.kind {
            TokenKind::Word(_) => slice.to_ascii_lowercase(),
            TokenKind::QuotedIdent(_) => slice[1..slice.len() - 1].replace("\"\"", "\""),
            _ => continue,
        };
        let call = tokens
            .get(i + 1)
            .is_some_and(|n| n.kind == TokenKind::LParen);
        let type_name = i > 0 && tokens[i - 1].kind == TokenKind::DoubleColon;
        if name != old || call || type_name {
            continue;
        }
        out.push_str(&text[at..t.start]);
        out.push_str(&crate::types::funcs::format::quote_identifier(new));
        at = t.end;
    }
    out.push_str(&text[at..]);
    out
}

/// The rows of `new` computed by `values` from `rows` of `old`.
fn convert(
    old: &TableDef,
    new: &TableDef,
    values: &[NewValue],
    rows: &[Vec<Value>],
) -> Result<Vec<Vec<Value>>> {
    let batch = rows_batch(old, rows);
    let computed: Vec<Option<Vector>> = values
        .iter()
        .zip(&new.columns)
        .map(|(v, col)| match v {
            NewValue::Old(_) => Ok(None),
            NewValue::Expr(e) => {
                if e.ty != col.ty {
                    return Err(err!(
                        InternalError,
                        "new value of column \"{}\" is of type {}",
                        col.name,
                        e.ty
                    ));
                }
                Ok(Some(e.eval(&batch)?.into_owned()))
            }
        })
        .collect::<Result<_>>()?;
    Ok((0..rows.len())
        .map(|i| {
            values
                .iter()
                .zip(&computed)
                .map(|(v, c)| match (v, c) {
                    (NewValue::Old(k), _) => rows[i][*k].clone(),
                    (_, Some(vec)) => vec.get(i),
                    (_, None) => Value::Null,
                })
                .collect()
        })
        .collect())
}

/// `rows` of `table` as a batch of its columns.
fn rows_batch(table: &TableDef, rows: &[Vec<Value>]) -> Batch {
    let columns = table
        .columns
        .iter()
        .enumerate()
        .map(|(c, col)| {
            let vals: Vec<Value> = rows.iter().map(|r| r[c].clone()).collect();
            Vector::from_values(col.ty, &vals)
        })
        .collect();
    let mut b = Batch::new(columns);
    b.len = rows.len();
    b
}
