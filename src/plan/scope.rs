//! Name scopes: which columns an expression may reference, and where they
//! are in the input batch.
//!
//! A [`Scope`] lists the columns of an operator's input in order, each with
//! the name of the FROM item it came from (its alias, or the table name).
//! Joining two inputs concatenates their scopes. Resolution follows
//! PostgreSQL: an unqualified name must match exactly one column (else
//! `column reference "a" is ambiguous`), a qualified one must name a FROM
//! item of the scope (else `missing FROM-clause entry for table "x"`).

use crate::err;
use crate::error::Result;
use crate::types::DataType;

/// One column of a scope.
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeColumn {
    /// The FROM item's name (alias or table name); `None` for columns of
    /// unnamed inputs.
    pub qualifier: Option<String>,
    /// Column name.
    pub name: String,
    /// Its type.
    pub ty: DataType,
    /// Hidden from `*` and from unqualified names (the right-hand copy of a
    /// tuple id of UPDATE/DELETE scans).
    pub hidden: bool,
    /// A join's `USING`/`NATURAL` column merged into one output column:
    /// reachable only qualified (`l.k`) and through `l.*`; unqualified
    /// names and `*` see the merged column instead.
    pub merged: bool,
}

/// A FROM item's names: the one queries use, and the table's own name when
/// an alias hides it (for PostgreSQL's "invalid reference" error).
#[derive(Debug, Clone, PartialEq)]
pub struct ScopeItem {
    /// The name columns are qualified with (alias or table name).
    pub name: String,
    /// The table's name when `name` is an alias for it.
    pub hidden_table: Option<String>,
}

/// The columns visible to an expression, in input order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    /// The columns.
    pub columns: Vec<ScopeColumn>,
    /// The FROM items, even those none of whose columns are read.
    pub items: Vec<ScopeItem>,
}

impl Scope {
    /// A scope of the columns of one FROM item.
    pub fn of(qualifier: &str, cols: impl IntoIterator<Item = (String, DataType)>) -> Scope {
        Scope {
            items: vec![ScopeItem {
                name: qualifier.to_string(),
                hidden_table: None,
            }],
            columns: cols
                .into_iter()
                .map(|(name, ty)| ScopeColumn {
                    qualifier: Some(qualifier.to_string()),
                    name,
                    ty,
                    hidden: false,
                    merged: false,
                })
                .collect(),
        }
    }

    /// This scope followed by `other` (a join's input). Two FROM items of
    /// one name are an error, as in PostgreSQL.
    pub fn join(&self, other: &Scope) -> Result<Scope> {
        for it in &other.items {
            if self.items.iter().any(|m| m.name == it.name) {
                return Err(err!(
                    DuplicateAlias,
                    "table name \"{}\" specified more than once",
                    it.name
                ));
            }
        }
        let mut columns = self.columns.clone();
        columns.extend(other.columns.iter().cloned());
        let mut items = self.items.clone();
        items.extend(other.items.iter().cloned());
        Ok(Scope { columns, items })
    }

    /// Number of columns.
    pub fn len(&self) -> usize {
        self.columns.len()
    }

    /// True when the scope has no columns.
    pub fn is_empty(&self) -> bool {
        self.columns.is_empty()
    }

    /// Whether the scope has a FROM item called `qualifier`.
    pub fn has_qualifier(&self, qualifier: &str) -> bool {
        self.items.iter().any(|i| i.name == qualifier)
    }

    /// The error for a qualifier that names no FROM item.
    fn missing(&self, q: &str) -> crate::error::Error {
        match self
            .items
            .iter()
            .find(|i| i.hidden_table.as_deref() == Some(q))
        {
            Some(it) => err!(
                UndefinedTable,
                "invalid reference to FROM-clause entry for table \"{q}\""
            )
            .with_hint(format!(
                "Perhaps you meant to reference the table alias \"{}\".",
                it.name
            )),
            None => err!(
                UndefinedTable,
                "missing FROM-clause entry for table \"{q}\""
            ),
        }
    }

    /// Resolves `[qualifier.]name` to a column position and type.
    pub fn resolve(&self, qualifier: Option<&str>, name: &str) -> Result<(usize, DataType)> {
        match qualifier {
            Some(q) => {
                if !self.has_qualifier(q) {
                    return Err(self.missing(q));
                }
                let mut found = self
                    .columns
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| c.qualifier.as_deref() == Some(q) && c.name == name);
                match (found.next(), found.next()) {
                    (Some((i, c)), None) => Ok((i, c.ty)),
                    (Some(_), Some(_)) => Err(err!(
                        AmbiguousColumn,
                        "column reference \"{q}.{name}\" is ambiguous"
                    )),
                    (None, _) => Err(err!(UndefinedColumn, "column {q}.{name} does not exist")),
                }
            }
            None => {
                let mut found = self
                    .columns
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| !c.hidden && !c.merged && c.name == name);
                match (found.next(), found.next()) {
                    (Some((i, c)), None) => Ok((i, c.ty)),
                    (Some(_), Some(_)) => Err(err!(
                        AmbiguousColumn,
                        "column reference \"{name}\" is ambiguous"
                    )),
                    (None, _) => Err(err!(UndefinedColumn, "column \"{name}\" does not exist")),
                }
            }
        }
    }

    /// The positions `*` (or `q.*`) expands to.
    pub fn wildcard(&self, qualifier: Option<&str>) -> Result<Vec<usize>> {
        if let Some(q) = qualifier {
            if !self.has_qualifier(q) {
                return Err(self.missing(q));
            }
        }
        Ok(self
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| {
                !c.hidden
                    && match qualifier {
                        Some(q) => c.qualifier.as_deref() == Some(q),
                        None => !c.merged,
                    }
            })
            .map(|(i, _)| i)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolution_errors_match_postgresql() {
        let a = Scope::of(
            "a",
            [("x".into(), DataType::Int4), ("y".into(), DataType::Text)],
        );
        let b = Scope::of("b", [("x".into(), DataType::Int8)]);
        let s = a.join(&b).unwrap();
        assert!(a.join(&a).is_err());
        assert_eq!(s.resolve(None, "y").unwrap(), (1, DataType::Text));
        assert_eq!(s.resolve(Some("b"), "x").unwrap(), (2, DataType::Int8));
        assert_eq!(
            s.resolve(None, "x").unwrap_err().message,
            "column reference \"x\" is ambiguous"
        );
        assert_eq!(
            s.resolve(None, "z").unwrap_err().message,
            "column \"z\" does not exist"
        );
        assert_eq!(
            s.resolve(Some("a"), "z").unwrap_err().message,
            "column a.z does not exist"
        );
        assert_eq!(
            s.resolve(Some("c"), "x").unwrap_err().message,
            "missing FROM-clause entry for table \"c\""
        );
        assert_eq!(s.wildcard(None).unwrap(), vec![0, 1, 2]);
        assert_eq!(s.wildcard(Some("b")).unwrap(), vec![2]);
    }
}
