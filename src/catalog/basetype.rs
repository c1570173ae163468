//! Base types and their internal I/O functions in the catalog: the
//! `pg_type` rows of `CREATE TYPE name` (a shell) and `CREATE TYPE name
//! (INPUT = ..., OUTPUT = ...)` (a base type, `typtype = 'b'`), and the
//! `pg_proc` rows of `CREATE FUNCTION ... LANGUAGE internal`.
//!
//! A base type's values are stored as those of the built-in type whose
//! I/O routines its input and output functions name (`int4in` gives
//! `integer`'s storage): `storage` is that type, `None` while the type is
//! a shell. Functions and types name types by their display name (as
//! PostgreSQL's `format_type`: `double precision`, `cstring`, `xfloat4`),
//! which no statement can change while anything names them. Both are
//! versioned with the same `xmin`/`xmax` rules as domains
//! ([`super::versions`]).
//!
//! Invariants: no two visible base types share a name, nor a name with a
//! domain or a built-in type, and no two visible internal functions share
//! a name and argument types (`commands::typedef` checks before creating).

use std::sync::Arc;

use super::persist::{corrupt, esc, parse_type_tag, type_tag, unesc};
use super::versions::{replace, Version};
use super::{Catalog, CatalogView};
use crate::err;
use crate::error::Result;
use crate::txn::Xid;
use crate::types::DataType;

/// A shell or base type.
#[derive(Debug, Clone, PartialEq)]
pub struct BaseTypeDef {
    /// Object id.
    pub oid: u32,
    /// Name.
    pub name: String,
    /// The built-in type whose storage its values have; `None`: a shell.
    pub storage: Option<DataType>,
    /// The input function's name (`None` for a shell).
    pub input: Option<String>,
    /// The output function's name (`None` for a shell).
    pub output: Option<String>,
    /// Its description (`COMMENT ON`), never empty.
    pub comment: Option<String>,
}

/// A function of `LANGUAGE internal`: a name for a built-in routine.
#[derive(Debug, Clone, PartialEq)]
pub struct InternalFuncDef {
    /// Object id.
    pub oid: u32,
    /// Name.
    pub name: String,
    /// The argument types' display names.
    pub args: Vec<String>,
    /// The result type's display name.
    pub ret: String,
    /// The built-in routine (`prosrc`: `int4in`).
    pub prosrc: String,
}

impl InternalFuncDef {
    /// `name(type, ...)`, as PostgreSQL's notices name a function.
    pub fn signature(&self) -> String {
        format!("{}({})", self.name, self.args.join(", "))
    }
}

/// One version of a base type.
pub(super) type BaseTypeVersion = Version<BaseTypeDef>;
/// One version of an internal function.
pub(super) type InternalFuncVersion = Version<InternalFuncDef>;

impl Catalog {
    /// The base or shell type `name` that `view` sees, if any.
    pub fn lookup_base_type(&self, view: &CatalogView, name: &str) -> Option<Arc<BaseTypeDef>> {
        let st = self.read();
        super::versions::find(&st.base_types, view, |d| d.name == name)
    }

    /// Every internal function `view` sees, in oid order.
    pub fn internal_functions(&self, view: &CatalogView) -> Vec<Arc<InternalFuncDef>> {
        let mut out: Vec<_> = super::versions::visible(&self.read().internal_funcs, view, |_| true);
        out.sort_by_key(|f| f.oid);
        out
    }

    /// Adds a base or shell type made by transaction `xid`.
    pub fn create_base_type(&self, xid: Xid, def: BaseTypeDef) {
        super::versions::insert(&mut self.write().base_types, xid, Arc::new(def));
    }

    /// Replaces (a shell's completion) or deletes the base type `oid` that
    /// `view` sees; 40001 when another transaction changed it first.
    pub fn replace_base_type(
        &self,
        view: &CatalogView,
        xid: Xid,
        oid: u32,
        replacement: Option<BaseTypeDef>,
    ) -> Result<()> {
        let mut st = self.write();
        let Some(pos) = super::versions::position(&st.base_types, view, |d| d.oid == oid) else {
            return Err(err!(UndefinedObject, "type with OID {oid} does not exist"));
        };
        replace(&mut st.base_types, pos, view, xid, replacement)
    }

    /// Adds an internal function made by transaction `xid`.
    pub fn create_internal_function(&self, xid: Xid, def: InternalFuncDef) {
        super::versions::insert(&mut self.write().internal_funcs, xid, Arc::new(def));
    }

    /// Deletes the internal function `oid` that `view` sees.
    pub fn drop_internal_function(&self, view: &CatalogView, xid: Xid, oid: u32) -> Result<()> {
        let mut st = self.write();
        let Some(pos) = super::versions::position(&st.internal_funcs, view, |d| d.oid == oid)
        else {
            return Err(err!(
                UndefinedFunction,
                "function with OID {oid} does not exist"
            ));
        };
        replace(&mut st.internal_funcs, pos, view, xid, None)
    }
}

/// Appends the catalog file's lines: `basetype <oid> <xmin> <xmax> <name>
/// <storage type or -> <input or -> <output or ->` and `ifunction <oid>
/// <xmin> <xmax> <name> <result> <prosrc> <n> <arg> ...`.
pub(super) fn write(text: &mut String, ts: &[BaseTypeVersion], fs: &[InternalFuncVersion]) {
    let opt = |s: &Option<String>| s.as_deref().map(esc).unwrap_or_else(|| "-".into());
    for v in ts {
        let d = &v.def;
        text.push_str(&format!(
            "basetype {} {} {} {} {} {} {}\n",
            d.oid,
            v.xmin,
            v.xmax,
            esc(&d.name),
            d.storage
                .as_ref()
                .map(type_tag)
                .unwrap_or_else(|| "-".into()),
            opt(&d.input),
            opt(&d.output),
        ));
        super::comment::write(text, &d.comment);
    }
    for v in fs {
        let d = &v.def;
        text.push_str(&format!(
            "ifunction {} {} {} {} {} {} {}",
            d.oid,
            v.xmin,
            v.xmax,
            esc(&d.name),
            esc(&d.ret),
            esc(&d.prosrc),
            d.args.len()
        ));
        for a in &d.args {
            text.push_str(&format!(" {}", esc(a)));
        }
        text.push('\n');
    }
}

fn num(f: &[&str], i: usize, what: &str) -> Result<u64> {
    f.get(i)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| corrupt(what))
}

/// Reads a `basetype` line (split on spaces).
pub(super) fn parse_type(f: &[&str]) -> Result<BaseTypeVersion> {
    if f.len() != 8 {
        return Err(corrupt("bad basetype line"));
    }
    let opt = |s: &str| -> Result<Option<String>> {
        if s == "-" {
            Ok(None)
        } else {
            unesc(s).map(Some)
        }
    };
    let def = BaseTypeDef {
        comment: None,
        oid: num(f, 1, "bad basetype line")? as u32,
        name: unesc(f[4])?,
        storage: if f[5] == "-" {
            None
        } else {
            Some(parse_type_tag(f[5])?)
        },
        input: opt(f[6])?,
        output: opt(f[7])?,
    };
    Ok(Version {
        xmin: num(f, 2, "bad basetype line")? as Xid,
        xmax: num(f, 3, "bad basetype line")? as Xid,
        def: Arc::new(def),
    })
}

/// Reads an `ifunction` line (split on spaces).
pub(super) fn parse_function(f: &[&str]) -> Result<InternalFuncVersion> {
    let bad = "bad ifunction line";
    let n = num(f, 7, bad)? as usize;
    if f.len() != 8 + n {
        return Err(corrupt(bad));
    }
    let def = InternalFuncDef {
        oid: num(f, 1, bad)? as u32,
        name: unesc(f[4])?,
        ret: unesc(f[5])?,
        prosrc: unesc(f[6])?,
        args: f[8..].iter().map(|a| unesc(a)).collect::<Result<_>>()?,
    };
    Ok(Version {
        xmin: num(f, 2, bad)? as Xid,
        xmax: num(f, 3, bad)? as Xid,
        def: Arc::new(def),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Type and function lines read back as written; damaged ones are
    /// refused.
    #[test]
    fn lines_round_trip() {
        let t = BaseTypeDef {
            comment: None,
            oid: 16390,
            name: "x float".into(),
            storage: Some(DataType::Int4),
            input: Some("xin".into()),
            output: Some("xout".into()),
        };
        let shell = BaseTypeDef {
            storage: None,
            input: None,
            output: None,
            ..t.clone()
        };
        let f = InternalFuncDef {
            oid: 16391,
            name: "xin".into(),
            args: vec!["cstring".into(), "double precision".into()],
            ret: "x float".into(),
            prosrc: "int4in".into(),
        };
        let v = |def| Version {
            xmin: 5,
            xmax: 0,
            def: Arc::new(def),
        };
        let mut text = String::new();
        write(
            &mut text,
            &[v(t.clone()), v(shell.clone())],
            &[Version {
                xmin: 5,
                xmax: 7,
                def: Arc::new(f.clone()),
            }],
        );
        let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split(' ').collect()).collect();
        assert_eq!(*parse_type(&lines[0]).unwrap().def, t);
        assert_eq!(*parse_type(&lines[1]).unwrap().def, shell);
        let back = parse_function(&lines[2]).unwrap();
        assert_eq!((&*back.def, back.xmax), (&f, 7));
        assert!(parse_type(&lines[0][..7]).is_err());
        assert!(parse_function(&lines[2][..9]).is_err());
    }
}
