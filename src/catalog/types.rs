//! User-defined types in the catalog: the domains of `CREATE DOMAIN`
//! (PostgreSQL's `pg_type` rows of `typtype = 'd'` and their
//! `pg_constraint` rows).
//!
//! A domain is kept as its base type (with modifier), its `DEFAULT` and
//! `CHECK` expressions as source text (bound again, with `VALUE` standing
//! for the checked value, when a statement uses the domain) and whether it
//! allows NULL. A column of a domain type stores its base type and names
//! the domain (`ColumnDef::domain`). Domains are versioned with the same
//! `xmin`/`xmax` rules as tables, views and functions (see the parent
//! module): created, altered and dropped transactionally, written to the
//! catalog file before the commit is recorded, cleaned of uncommitted
//! versions on open.
//!
//! Invariants: no two visible domains have the same name
//! (`commands::typecmds` checks before creating); `serial` is unique among
//! the definitions of this process, so a compiled check cached under it is
//! that very version's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::persist::{corrupt, esc, parse_type_tag, type_tag, unesc};
use super::{Catalog, CatalogView};
use crate::err;
use crate::error::Result;
use crate::txn::Xid;
use crate::types::DataType;

/// Source of [`DomainDef::serial`].
static SERIAL: AtomicU64 = AtomicU64::new(1);

/// One `CHECK` constraint of a domain.
#[derive(Debug, Clone, PartialEq)]
pub struct DomainCheck {
    /// The constraint's name (`<domain>_check` unless given).
    pub name: String,
    /// The expression's source text, `VALUE` naming the checked value.
    pub expr: String,
    /// Its description (`COMMENT ON`), never empty.
    pub comment: Option<String>,
}

/// A domain's definition.
#[derive(Debug, Clone)]
pub struct DomainDef {
    /// Object id (kept by `ALTER DOMAIN`).
    pub oid: u32,
    /// Name.
    pub name: String,
    /// The base type, with modifier.
    pub base: DataType,
    /// The `DEFAULT` expression as SQL text.
    pub default: Option<String>,
    /// `NOT NULL`: NULL is not a value of the domain.
    pub not_null: bool,
    /// The `CHECK` constraints, in creation order.
    pub checks: Vec<DomainCheck>,
    /// The domain this one is over, when its base type is a domain (whose
    /// constraints a value passes first, and whose DEFAULT it inherits).
    pub parent: Option<String>,
    /// Unique per definition made in this process (see the module doc).
    pub serial: u64,
    /// Its description (`COMMENT ON`), never empty.
    pub comment: Option<String>,
}

impl PartialEq for DomainDef {
    fn eq(&self, o: &DomainDef) -> bool {
        (
            self.oid,
            &self.name,
            self.base,
            &self.default,
            self.not_null,
            &self.checks,
        ) == (o.oid, &o.name, o.base, &o.default, o.not_null, &o.checks)
            && self.parent == o.parent
            && self.comment == o.comment
    }
}

impl DomainDef {
    /// A definition with a fresh serial.
    pub fn new(
        oid: u32,
        name: String,
        base: DataType,
        default: Option<String>,
        not_null: bool,
        checks: Vec<DomainCheck>,
    ) -> DomainDef {
        DomainDef {
            comment: None,
            oid,
            name,
            base,
            default,
            not_null,
            checks,
            parent: None,
            serial: SERIAL.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The same definition with a fresh serial (after a change).
    pub fn renewed(&self) -> DomainDef {
        DomainDef {
            serial: SERIAL.fetch_add(1, Ordering::Relaxed),
            ..self.clone()
        }
    }
}

/// One version of a domain definition ([`super::versions`]).
pub(super) type TypeVersion = super::versions::Version<DomainDef>;

impl Catalog {
    /// The domain `name` that `view` sees, if any.
    pub fn lookup_domain(&self, view: &CatalogView, name: &str) -> Option<Arc<DomainDef>> {
        let st = self.read();
        if st.types.is_empty() {
            return None;
        }
        super::versions::find(&st.types, view, |d| d.name == name)
    }

    /// Every domain `view` sees, by name.
    pub fn domains(&self, view: &CatalogView) -> Vec<Arc<DomainDef>> {
        let mut out: Vec<_> = super::versions::visible(&self.read().types, view, |_| true);
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Adds a domain created by transaction `xid`.
    pub fn create_domain(&self, xid: Xid, def: DomainDef) -> Arc<DomainDef> {
        let def = Arc::new(def);
        super::versions::insert(&mut self.write().types, xid, def.clone());
        def
    }

    /// Marks the version of domain `oid` that `view` sees as deleted by
    /// `xid`, optionally replacing it (`ALTER DOMAIN`). Fails with 40001
    /// when another transaction already changed it.
    pub fn replace_domain(
        &self,
        view: &CatalogView,
        xid: Xid,
        oid: u32,
        replacement: Option<DomainDef>,
    ) -> Result<()> {
        let mut st = self.write();
        let Some(pos) = super::versions::position(&st.types, view, |d| d.oid == oid) else {
            return Err(err!(UndefinedObject, "type with OID {oid} does not exist"));
        };
        super::versions::replace(&mut st.types, pos, view, xid, replacement)
    }
}

pub(super) use super::versions::{abort, prune, settle};

/// Appends the catalog file's line of every domain version:
/// `domain <oid> <xmin> <xmax> <name> <base type> <not_null 0|1>
/// <default or -> <n> <check name> <check expr> ... [<parent domain>]`.
pub(super) fn write(text: &mut String, ts: &[TypeVersion]) {
    for v in ts {
        let d = &v.def;
        text.push_str(&format!(
            "domain {} {} {} {} {} {} {} {}",
            d.oid,
            v.xmin,
            v.xmax,
            esc(&d.name),
            type_tag(&d.base),
            u8::from(d.not_null),
            d.default.as_deref().map(esc).unwrap_or_else(|| "-".into()),
            d.checks.len()
        ));
        for c in &d.checks {
            text.push_str(&format!(" {} {}", esc(&c.name), esc(&c.expr)));
        }
        if let Some(p) = &d.parent {
            text.push_str(&format!(" {}", esc(p)));
        }
        text.push('\n');
        super::comment::write(text, &d.comment);
        for (i, c) in d.checks.iter().enumerate() {
            super::comment::write_constraint(text, i, &c.comment);
        }
    }
}

/// Reads a `domain` line (split on spaces).
pub(super) fn parse(f: &[&str]) -> Result<TypeVersion> {
    let bad = || corrupt("bad domain line");
    let num = |i: usize| -> Result<u64> { f.get(i).and_then(|s| s.parse().ok()).ok_or_else(bad) };
    let n = num(8)? as usize;
    if f.len() != 9 + 2 * n && f.len() != 10 + 2 * n {
        return Err(bad());
    }
    let mut checks = Vec::with_capacity(n);
    for k in 0..n {
        checks.push(DomainCheck {
            comment: None,
            name: unesc(f[9 + 2 * k])?,
            expr: unesc(f[10 + 2 * k])?,
        });
    }
    let mut def = DomainDef::new(
        num(1)? as u32,
        unesc(f[4])?,
        parse_type_tag(f[5])?,
        if f[7] == "-" {
            None
        } else {
            Some(unesc(f[7])?)
        },
        f[6] == "1",
        checks,
    );
    def.parent = f.get(9 + 2 * n).map(|p| unesc(p)).transpose()?;
    Ok(TypeVersion {
        xmin: num(2)? as Xid,
        xmax: num(3)? as Xid,
        def: Arc::new(def),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A domain line reads back as the definition written, and damaged
    /// lines are refused.
    #[test]
    fn domain_lines_round_trip() {
        let mut def = DomainDef::new(
            16401,
            "short name".into(),
            DataType::Varchar(Some(5)),
            Some("'x y'".into()),
            true,
            vec![
                DomainCheck {
                    comment: None,
                    name: "d_check".into(),
                    expr: "length(VALUE) > 0".into(),
                },
                DomainCheck {
                    comment: None,
                    name: "d check1".into(),
                    expr: "VALUE <> '%'".into(),
                },
            ],
        );
        def.parent = Some("inner dom".into());
        let mut text = String::new();
        write(
            &mut text,
            &[TypeVersion {
                xmin: 7,
                xmax: 0,
                def: Arc::new(def.clone()),
            }],
        );
        let f: Vec<&str> = text.trim_end().split(' ').collect();
        let back = parse(&f).unwrap();
        assert_eq!(*back.def, def);
        assert_ne!(back.def.serial, def.serial);
        assert_eq!((back.xmin, back.xmax), (7, 0));
        // Without the parent the line is whole; without more it is not.
        assert_eq!(parse(&f[..f.len() - 1]).unwrap().def.parent, None);
        assert!(parse(&f[..f.len() - 2]).is_err());
    }
}
