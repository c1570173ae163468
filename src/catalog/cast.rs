//! User-defined casts in the catalog: PostgreSQL's `pg_cast` rows made by
//! `CREATE CAST`.
//!
//! A cast names its source and target types by display name (as
//! [`super::basetype`] does), says how it converts (`b`: the value's bits
//! as they are, `i`: through text, `f`: a function) and where it applies
//! without being written (`e`, `a`, `i` as `castcontext`). Casts are
//! versioned with the same `xmin`/`xmax` rules as domains
//! ([`super::versions`]).
//!
//! Invariant: at most one visible cast per (source, target) pair
//! (`commands::typedef` checks before creating).

use std::sync::Arc;

use super::persist::{corrupt, esc, unesc};
use super::versions::{replace, Version};
use super::{Catalog, CatalogView};
use crate::err;
use crate::error::Result;
use crate::txn::Xid;

/// A user-defined cast.
#[derive(Debug, Clone, PartialEq)]
pub struct CastDef {
    /// Object id.
    pub oid: u32,
    /// The source type's display name.
    pub source: String,
    /// The target type's display name.
    pub target: String,
    /// `b` (binary-coercible), `i` (I/O conversion) or `f` (a function).
    pub method: char,
    /// The function's signature, for method `f`.
    pub func: Option<String>,
    /// `e` (explicit only), `a` (assignment) or `i` (implicit).
    pub context: char,
}

impl CastDef {
    /// `cast from a to b`, as PostgreSQL's messages name a cast.
    pub fn described(&self) -> String {
        format!("cast from {} to {}", self.source, self.target)
    }
}

/// One version of a cast.
pub(super) type CastVersion = Version<CastDef>;

impl Catalog {
    /// Every cast `view` sees, in oid order.
    pub fn casts(&self, view: &CatalogView) -> Vec<Arc<CastDef>> {
        let st = self.read();
        if st.casts.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<_> = super::versions::visible(&st.casts, view, |_| true);
        out.sort_by_key(|c| c.oid);
        out
    }

    /// The cast from `source` to `target` that `view` sees, if any.
    pub fn lookup_cast(
        &self,
        view: &CatalogView,
        source: &str,
        target: &str,
    ) -> Option<Arc<CastDef>> {
        let st = self.read();
        if st.casts.is_empty() {
            return None;
        }
        super::versions::find(&st.casts, view, |d| {
            d.source == source && d.target == target
        })
    }

    /// Adds a cast made by transaction `xid`.
    pub fn create_cast(&self, xid: Xid, def: CastDef) {
        super::versions::insert(&mut self.write().casts, xid, Arc::new(def));
    }

    /// Deletes the cast `oid` that `view` sees.
    pub fn drop_cast(&self, view: &CatalogView, xid: Xid, oid: u32) -> Result<()> {
        let mut st = self.write();
        let Some(pos) = super::versions::position(&st.casts, view, |d| d.oid == oid) else {
            return Err(err!(UndefinedObject, "cast with OID {oid} does not exist"));
        };
        replace(&mut st.casts, pos, view, xid, None)
    }
}

/// Appends the catalog file's line of every cast version: `cast <oid>
/// <xmin> <xmax> <source> <target> <b|i|f> <e|a|i> [<function>]`.
pub(super) fn write(text: &mut String, cs: &[CastVersion]) {
    for v in cs {
        let d = &v.def;
        text.push_str(&format!(
            "cast {} {} {} {} {} {} {}",
            d.oid,
            v.xmin,
            v.xmax,
            esc(&d.source),
            esc(&d.target),
            d.method,
            d.context
        ));
        if let Some(f) = &d.func {
            text.push_str(&format!(" {}", esc(f)));
        }
        text.push('\n');
    }
}

/// Reads a `cast` line (split on spaces).
pub(super) fn parse(f: &[&str]) -> Result<CastVersion> {
    let bad = || corrupt("bad cast line");
    let num = |i: usize| -> Result<u64> { f.get(i).and_then(|s| s.parse().ok()).ok_or_else(bad) };
    let one = |s: &str, allowed: &str| -> Result<char> {
        let c = s.chars().next().ok_or_else(bad)?;
        if s.len() == 1 && allowed.contains(c) {
            Ok(c)
        } else {
            Err(bad())
        }
    };
    if f.len() != 8 && f.len() != 9 {
        return Err(bad());
    }
    let def = CastDef {
        oid: num(1)? as u32,
        source: unesc(f[4])?,
        target: unesc(f[5])?,
        method: one(f[6], "bif")?,
        context: one(f[7], "eai")?,
        func: f.get(8).map(|s| unesc(s)).transpose()?,
    };
    Ok(Version {
        xmin: num(2)? as Xid,
        xmax: num(3)? as Xid,
        def: Arc::new(def),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cast line reads back as written; damaged ones are refused.
    #[test]
    fn cast_lines_round_trip() {
        for func in [None, Some("f(text)".to_string())] {
            let c = CastDef {
                oid: 16400,
                source: "double precision".into(),
                target: "xfloat8".into(),
                method: if func.is_some() { 'f' } else { 'b' },
                func,
                context: 'a',
            };
            let mut text = String::new();
            write(
                &mut text,
                &[Version {
                    xmin: 3,
                    xmax: 0,
                    def: Arc::new(c.clone()),
                }],
            );
            let f: Vec<&str> = text.trim_end().split(' ').collect();
            assert_eq!(*parse(&f).unwrap().def, c);
            assert!(parse(&f[..7]).is_err());
        }
        assert!(parse(&["cast", "1", "2", "0", "=a", "=b", "x", "e"]).is_err());
    }
}
