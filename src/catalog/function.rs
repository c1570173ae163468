//! User-defined functions in the catalog: PostgreSQL's `pg_proc` rows made
//! by `CREATE FUNCTION`.
//!
//! A function is kept as its declaration (name, argument names and types,
//! result type, language, volatility, strictness) and its body's source
//! text; the planner compiles the body when a statement first calls that
//! version (`plan::userfunc`). Functions are versioned with the same
//! `xmin`/`xmax` rules as tables and views (see the parent module):
//! created, replaced and dropped transactionally, written to the catalog
//! file before the commit is recorded, cleaned of uncommitted versions on
//! open.
//!
//! Invariants: no two visible functions have the same name and argument
//! types (`commands::functioncmds` checks before creating); `serial` is
//! unique among the definitions of this process, so a compiled body cached
//! under it is that very version's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::persist::{corrupt, esc, parse_type_tag, type_tag, unesc};
use super::{Catalog, CatalogView};
use crate::err;
use crate::error::Result;
use crate::txn::Xid;
use crate::types::funcs::volatility::Volatility;
use crate::types::DataType;

/// Source of [`FunctionDef::serial`].
static SERIAL: AtomicU64 = AtomicU64::new(1);

/// One declared argument.
#[derive(Debug, Clone, PartialEq)]
pub struct FuncArg {
    /// Its name, when declared (`f(x int)`).
    pub name: Option<String>,
    /// Its type (a domain's base type when declared with a domain).
    pub ty: DataType,
    /// The domain it was declared with, whose constraints an argument
    /// passes when the function is called.
    pub domain: Option<String>,
}

/// The language of a function's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    /// `LANGUAGE sql`: statements, the last SELECT's first row returned.
    Sql,
    /// `LANGUAGE plpgsql`: a block (the subset `exec::plpgsql` runs).
    Plpgsql,
}

impl Language {
    /// The language's name.
    pub fn name(self) -> &'static str {
        match self {
            Language::Sql => "sql",
            Language::Plpgsql => "plpgsql",
        }
    }
}

/// A function's definition.
#[derive(Debug, Clone)]
pub struct FunctionDef {
    /// Object id (kept by `CREATE OR REPLACE`).
    pub oid: u32,
    /// Name.
    pub name: String,
    /// The arguments, in order.
    pub args: Vec<FuncArg>,
    /// The result type (a domain's base type when declared with a domain).
    pub ret: DataType,
    /// The domain the result was declared with, whose constraints the
    /// result passes when the function returns.
    pub ret_domain: Option<String>,
    /// The body's language.
    pub language: Language,
    /// Declared volatility (`VOLATILE` by default).
    pub volatility: Volatility,
    /// `STRICT`: NULL for any NULL argument, the body not run.
    pub strict: bool,
    /// Declared `PARALLEL SAFE` (PostgreSQL's `proparallel` 's'; UNSAFE and
    /// RESTRICTED, the default, are false).
    pub parallel_safe: bool,
    /// The body's source text.
    pub body: String,
    /// `RETURNS SETOF` / `RETURNS TABLE`: a set of rows, called in FROM.
    pub retset: bool,
    /// The result's columns when a set function returns rows of several
    /// columns (`RETURNS TABLE (a int, b text)`, `RETURNS SETOF table`);
    /// empty for a set of `ret` values.
    pub out_cols: Vec<(String, DataType)>,
    /// Unique per definition made in this process (see the module doc).
    pub serial: u64,
    /// Its description (`COMMENT ON`), never empty.
    pub comment: Option<String>,
}

impl PartialEq for FunctionDef {
    fn eq(&self, o: &FunctionDef) -> bool {
        (
            self.oid,
            &self.name,
            &self.args,
            self.ret,
            self.language,
            self.volatility,
        ) == (o.oid, &o.name, &o.args, o.ret, o.language, o.volatility)
            && self.parallel_safe == o.parallel_safe
            && self.strict == o.strict
            && self.comment == o.comment
            && self.body == o.body
            && self.ret_domain == o.ret_domain
            && self.retset == o.retset
            && self.out_cols == o.out_cols
    }
}

impl FunctionDef {
    /// A definition with a fresh serial.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        oid: u32,
        name: String,
        args: Vec<FuncArg>,
        ret: DataType,
        language: Language,
        volatility: Volatility,
        strict: bool,
        body: String,
    ) -> FunctionDef {
        FunctionDef {
            comment: None,
            oid,
            name,
            args,
            ret,
            ret_domain: None,
            language,
            volatility,
            strict,
            parallel_safe: false,
            body,
            retset: false,
            out_cols: Vec::new(),
            serial: SERIAL.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The argument types as PostgreSQL lists them: `f(integer, text)`.
    pub fn signature(&self) -> String {
        let list: Vec<String> = self.args.iter().map(|a| a.ty.to_string()).collect();
        format!("{}({})", self.name, list.join(", "))
    }
}

/// One version of a function definition ([`super::versions`]).
pub(super) type FuncVersion = super::versions::Version<FunctionDef>;

impl Catalog {
    /// The functions named `name` that `view` sees, oldest first.
    pub fn lookup_functions(&self, view: &CatalogView, name: &str) -> Vec<Arc<FunctionDef>> {
        let st = self.read();
        if st.functions.is_empty() {
            return Vec::new();
        }
        let mut out: Vec<_> = super::versions::visible(&st.functions, view, |d| d.name == name);
        out.sort_by_key(|f| f.oid);
        out
    }

    /// Every function `view` sees, by name then oid.
    pub fn functions(&self, view: &CatalogView) -> Vec<Arc<FunctionDef>> {
        let mut out: Vec<_> = super::versions::visible(&self.read().functions, view, |_| true);
        out.sort_by(|a, b| (&a.name, a.oid).cmp(&(&b.name, b.oid)));
        out
    }

    /// Adds a function created by transaction `xid`.
    pub fn create_function(&self, xid: Xid, def: FunctionDef) -> Arc<FunctionDef> {
        let def = Arc::new(def);
        super::versions::insert(&mut self.write().functions, xid, def.clone());
        def
    }

    /// Marks the version of function `oid` that `view` sees as deleted by
    /// `xid`, optionally replacing it (`CREATE OR REPLACE FUNCTION`).
    /// Fails with 40001 when another transaction already changed it.
    pub fn replace_function(
        &self,
        view: &CatalogView,
        xid: Xid,
        oid: u32,
        replacement: Option<FunctionDef>,
    ) -> Result<()> {
        let mut st = self.write();
        let Some(pos) = super::versions::position(&st.functions, view, |d| d.oid == oid) else {
            return Err(err!(
                UndefinedFunction,
                "function with OID {oid} does not exist"
            ));
        };
        super::versions::replace(&mut st.functions, pos, view, xid, replacement)
    }
}

pub(super) use super::versions::{abort, prune, settle};

fn volatility_tag(v: Volatility) -> &'static str {
    match v {
        Volatility::Immutable => "i",
        Volatility::Stable => "s",
        Volatility::Volatile => "v",
    }
}

/// Appends the catalog file's line of every function version:
/// `function <oid> <xmin> <xmax> <name> <language> <i|s|v>[+] <strict 0|1>
/// <result type> <body> <n> <arg name or -> <arg type> ... [<result domain
/// or -> <arg domain or -> ...] [setof <m> <column name> <column type>
/// ...]`, the domains only when one is declared, the `setof` section only
/// for a set-returning function (`m` columns, 0 for a set of the result
/// type); `+` after the volatility marks a PARALLEL SAFE function.
pub(super) fn write(text: &mut String, fs: &[FuncVersion]) {
    for v in fs {
        let d = &v.def;
        text.push_str(&format!(
            "function {} {} {} {} {} {} {} {} {} {}",
            d.oid,
            v.xmin,
            v.xmax,
            esc(&d.name),
            d.language.name(),
            volatility_tag(d.volatility).to_string() + if d.parallel_safe { "+" } else { "" },
            u8::from(d.strict),
            type_tag(&d.ret),
            esc(&d.body),
            d.args.len()
        ));
        for a in &d.args {
            let name = a.name.as_deref().map(esc).unwrap_or_else(|| "-".into());
            text.push_str(&format!(" {name} {}", type_tag(&a.ty)));
        }
        if d.ret_domain.is_some() || d.args.iter().any(|a| a.domain.is_some()) {
            let name = |n: &Option<String>| n.as_deref().map(esc).unwrap_or_else(|| "-".into());
            text.push_str(&format!(" {}", name(&d.ret_domain)));
            for a in &d.args {
                text.push_str(&format!(" {}", name(&a.domain)));
            }
        }
        if d.retset {
            text.push_str(&format!(" setof {}", d.out_cols.len()));
            for (n, t) in &d.out_cols {
                text.push_str(&format!(" {} {}", esc(n), type_tag(t)));
            }
        }
        text.push('\n');
        super::comment::write(text, &d.comment);
    }
}

/// Reads a `function` line (split on spaces).
pub(super) fn parse(f: &[&str]) -> Result<FuncVersion> {
    let bad = || corrupt("bad function line");
    // The `setof` section, last and marked by a word no escaped name or
    // `-` can be.
    let (f, setof) = match f.iter().position(|w| *w == "setof") {
        Some(at) if at > 10 => {
            let m: usize = f.get(at + 1).and_then(|w| w.parse().ok()).ok_or_else(bad)?;
            if f.len() != at + 2 + 2 * m {
                return Err(bad());
            }
            let mut cols = Vec::with_capacity(m);
            for k in 0..m {
                cols.push((
                    unesc(f[at + 2 + 2 * k])?,
                    parse_type_tag(f[at + 3 + 2 * k])?,
                ));
            }
            (&f[..at], Some(cols))
        }
        _ => (f, None),
    };
    let num = |i: usize| -> Result<u64> { f.get(i).and_then(|s| s.parse().ok()).ok_or_else(bad) };
    let n = num(10)? as usize;
    let with_domains = f.len() == 12 + 3 * n;
    if f.len() != 11 + 2 * n && !with_domains {
        return Err(bad());
    }
    let domain = |i: usize| -> Result<Option<String>> {
        match f.get(i) {
            Some(&"-") | None => Ok(None),
            Some(d) => unesc(d).map(Some),
        }
    };
    let language = match f[5] {
        "sql" => Language::Sql,
        "plpgsql" => Language::Plpgsql,
        _ => return Err(bad()),
    };
    let (tag, parallel_safe) = match f[6].strip_suffix('+') {
        Some(t) => (t, true),
        None => (f[6], false),
    };
    let volatility = match tag {
        "i" => Volatility::Immutable,
        "s" => Volatility::Stable,
        "v" => Volatility::Volatile,
        _ => return Err(bad()),
    };
    let mut args = Vec::with_capacity(n);
    for k in 0..n {
        let (name, ty) = (f[11 + 2 * k], f[12 + 2 * k]);
        args.push(FuncArg {
            name: if name == "-" {
                None
            } else {
                Some(unesc(name)?)
            },
            ty: parse_type_tag(ty)?,
            domain: if with_domains {
                domain(12 + 2 * n + k)?
            } else {
                None
            },
        });
    }
    let mut def = FunctionDef::new(
        num(1)? as u32,
        unesc(f[4])?,
        args,
        parse_type_tag(f[8])?,
        language,
        volatility,
        f[7] == "1",
        unesc(f[9])?,
    );
    if with_domains {
        def.ret_domain = domain(11 + 2 * n)?;
    }
    def.parallel_safe = parallel_safe;
    if let Some(cols) = setof {
        def.retset = true;
        def.out_cols = cols;
    }
    Ok(FuncVersion {
        xmin: num(2)? as Xid,
        xmax: num(3)? as Xid,
        def: Arc::new(def),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A function line reads back as the definition written, and damaged
    /// lines are refused.
    #[test]
    fn function_lines_round_trip() {
        let def = FunctionDef::new(
            16400,
            "add one".into(),
            vec![
                FuncArg {
                    name: Some("x".into()),
                    ty: DataType::Int4,
                    domain: None,
                },
                FuncArg {
                    name: None,
                    ty: DataType::Varchar(Some(3)),
                    domain: Some("short text".into()),
                },
            ],
            DataType::Int8,
            Language::Plpgsql,
            Volatility::Stable,
            true,
            "begin\n  return x + 1;\nend".into(),
        );
        let mut def = def;
        def.ret_domain = Some("big".into());
        def.parallel_safe = true;
        let mut text = String::new();
        write(
            &mut text,
            &[FuncVersion {
                xmin: 5,
                xmax: 0,
                def: Arc::new(def.clone()),
            }],
        );
        let f: Vec<&str> = text.trim_end().split(' ').collect();
        let back = parse(&f).unwrap();
        assert_eq!(*back.def, def);
        assert_ne!(back.def.serial, def.serial);
        assert_eq!((back.xmin, back.xmax), (5, 0));
        assert!(parse(&f[..f.len() - 1]).is_err());
        let mut wrong = f.clone();
        wrong[5] = "c";
        assert!(parse(&wrong).is_err());
        // Set-returning, with and without declared domains.
        for domains in [true, false] {
            let mut set = def.clone();
            set.retset = true;
            set.out_cols = vec![("a b".into(), DataType::Int4), ("c".into(), DataType::Text)];
            if !domains {
                set.ret_domain = None;
                set.args[1].domain = None;
            }
            let mut text = String::new();
            write(
                &mut text,
                &[FuncVersion {
                    xmin: 7,
                    xmax: 0,
                    def: Arc::new(set.clone()),
                }],
            );
            let f: Vec<&str> = text.trim_end().split(' ').collect();
            assert_eq!(*parse(&f).unwrap().def, set);
            assert!(parse(&f[..f.len() - 1]).is_err());
        }
    }
}
