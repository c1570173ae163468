//! The `jsonb` operators and editing functions, over [`Jsonb`] trees:
//! member access by key, index and path (`->`, `#>`), containment (`@>`),
//! key existence (`?`, `?|`, `?&`), concatenation (`||`), deletion (`-`,
//! `#-`), `jsonb_set`, `jsonb_insert` and `jsonb_strip_nulls`; and member
//! access over `json` text ([`json_get`]), which hands back the original
//! text of the member.
//!
//! Semantics and errors follow PostgreSQL 15's `jsonfuncs.c` and
//! `jsonb_util.c`: a missing key or an index out of range is NULL, never an
//! error; a negative index counts from the end; editing a scalar fails
//! (`cannot delete from scalar`, `cannot set path in scalar`, 22023); a
//! path step into an array that is not an integer fails only when editing
//! (`path element at position 2 is not an integer: "x"`, 22P02).

use super::jsonb::Jsonb;
use super::parse::{self, Kind, Mode, Node};
use crate::err;
use crate::error::Result;
use std::cmp::Ordering;

/// One step of an access path: a key or an array index.
#[derive(Debug, Clone, Copy)]
pub enum Step<'a> {
    /// An object key (or, into an array, an index written as text).
    Key(&'a str),
    /// An array index (negative: from the end).
    Index(i64),
}

/// Parses an index as PostgreSQL's `strtoint` does: optional spaces and
/// sign, digits, nothing after; `None` otherwise.
fn parse_index(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let v: i64 = t.parse().ok()?;
    (i32::MIN as i64..=i32::MAX as i64)
        .contains(&v)
        .then_some(v)
}

fn index_in(len: usize, i: i64) -> Option<usize> {
    let i = if i < 0 { len as i64 + i } else { i };
    (0..len as i64).contains(&i).then_some(i as usize)
}

/// The member a step reaches in a `jsonb` value, if any.
pub fn step<'j>(j: &'j Jsonb, s: Step<'_>) -> Option<&'j Jsonb> {
    match (j, s) {
        (Jsonb::Object(_), Step::Key(k)) => j.get(k),
        (Jsonb::Array(items), Step::Index(i)) => index_in(items.len(), i).map(|i| &items[i]),
        (Jsonb::Array(items), Step::Key(k)) => {
            index_in(items.len(), parse_index(k)?).map(|i| &items[i])
        }
        _ => None,
    }
}

/// The value a whole path reaches (`#>`); NULL path elements reach nothing.
pub fn path<'j>(j: &'j Jsonb, steps: &[Option<&str>]) -> Option<&'j Jsonb> {
    let mut cur = j;
    for s in steps {
        cur = step(cur, Step::Key((*s)?))?;
    }
    Some(cur)
}

/// `->>`'s text of a reached value: strings unquoted, `null` as SQL NULL.
pub fn as_text(j: &Jsonb) -> Option<String> {
    match j {
        Jsonb::Null => None,
        Jsonb::String(s) => Some(s.clone()),
        other => Some(other.to_text()),
    }
}

fn scalar_eq(a: &Jsonb, b: &Jsonb) -> bool {
    !a.is_container() && !b.is_container() && a.compare(b) == Ordering::Equal
}

/// `a @> b` (PostgreSQL's `JsonbDeepContains` and its top-level rule that
/// an array contains a bare scalar it has as an element).
pub fn contains(a: &Jsonb, b: &Jsonb) -> bool {
    match (a, b) {
        (Jsonb::Array(items), s) if !s.is_container() => items.iter().any(|x| scalar_eq(x, s)),
        _ => deep_contains(a, b),
    }
}

fn deep_contains(a: &Jsonb, b: &Jsonb) -> bool {
    match (a, b) {
        (Jsonb::Object(_), Jsonb::Object(want)) => want.iter().all(|(k, v)| match a.get(k) {
            None => false,
            Some(have) => match (have, v) {
                (Jsonb::Object(_), Jsonb::Object(_)) | (Jsonb::Array(_), Jsonb::Array(_)) => {
                    deep_contains(have, v)
                }
                (h, w) => scalar_eq(h, w),
            },
        }),
        (Jsonb::Array(have), Jsonb::Array(want)) => want.iter().all(|w| {
            if w.is_container() {
                have.iter().any(|h| {
                    matches!(
                        (h, w),
                        (Jsonb::Object(_), Jsonb::Object(_)) | (Jsonb::Array(_), Jsonb::Array(_))
                    ) && deep_contains(h, w)
                })
            } else {
                have.iter().any(|h| scalar_eq(h, w))
            }
        }),
        (x, y) => scalar_eq(x, y),
    }
}

/// `j ? key`: an object's key, an array's string element, or the string
/// itself.
pub fn exists(j: &Jsonb, key: &str) -> bool {
    match j {
        Jsonb::Object(_) => j.get(key).is_some(),
        Jsonb::Array(items) => items
            .iter()
            .any(|x| matches!(x, Jsonb::String(s) if s == key)),
        Jsonb::String(s) => s == key,
        _ => false,
    }
}

/// `a || b` (PostgreSQL's `IteratorConcat`).
pub fn concat(a: &Jsonb, b: &Jsonb) -> Jsonb {
    let elems = |j: &Jsonb| -> Vec<Jsonb> {
        match j {
            Jsonb::Array(items) => items.clone(),
            other => vec![other.clone()],
        }
    };
    match (a, b) {
        (Jsonb::Object(x), Jsonb::Object(y)) => {
            let mut m = x.clone();
            m.extend(y.iter().cloned());
            Jsonb::object(m)
        }
        _ => {
            let mut v = elems(a);
            v.extend(elems(b));
            Jsonb::Array(v)
        }
    }
}

fn cannot_delete_scalar() -> crate::error::Error {
    err!(InvalidParameterValue, "cannot delete from scalar")
}

/// `j - key` for each of `keys`: object members, or array strings.
pub fn delete_keys(j: &Jsonb, keys: &[&str]) -> Result<Jsonb> {
    Ok(match j {
        Jsonb::Object(m) => Jsonb::Object(
            m.iter()
                .filter(|(k, _)| !keys.contains(&k.as_str()))
                .cloned()
                .collect(),
        ),
        Jsonb::Array(items) => Jsonb::Array(
            items
                .iter()
                .filter(|x| !matches!(x, Jsonb::String(s) if keys.contains(&s.as_str())))
                .cloned()
                .collect(),
        ),
        _ => return Err(cannot_delete_scalar()),
    })
}

/// `j - index`.
pub fn delete_index(j: &Jsonb, i: i64) -> Result<Jsonb> {
    match j {
        Jsonb::Array(items) => {
            let mut items = items.clone();
            if let Some(k) = index_in(items.len(), i) {
                items.remove(k);
            }
            Ok(Jsonb::Array(items))
        }
        Jsonb::Object(_) => Err(err!(
            InvalidParameterValue,
            "cannot delete from object using integer index"
        )),
        _ => Err(cannot_delete_scalar()),
    }
}

/// What an edit at the end of a path does (PostgreSQL's `JB_PATH_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edit {
    /// `jsonb_set` with `create_missing`.
    Create,
    /// `jsonb_set` without it: replace only.
    Replace,
    /// `jsonb_insert` before the element.
    InsertBefore,
    /// `jsonb_insert(..., true)`: after it.
    InsertAfter,
    /// `#-`.
    Delete,
}

impl Edit {
    fn adds(self) -> bool {
        matches!(self, Edit::Create | Edit::InsertBefore | Edit::InsertAfter)
    }
}

/// `jsonb_set`, `jsonb_insert` and `#-` (PostgreSQL's `setPath`): the
/// caller has refused scalars and handled an empty path.
pub fn set_path(
    j: &Jsonb,
    steps: &[Option<&str>],
    level: usize,
    new: Option<&Jsonb>,
    edit: Edit,
) -> Result<Jsonb> {
    match j {
        Jsonb::Object(m) => set_in_object(m, steps, level, new, edit),
        Jsonb::Array(items) => set_in_array(items, steps, level, new, edit),
        scalar => Ok(scalar.clone()),
    }
}

fn set_in_object(
    m: &[(String, Jsonb)],
    steps: &[Option<&str>],
    level: usize,
    new: Option<&Jsonb>,
    edit: Edit,
) -> Result<Jsonb> {
    let last = level + 1 == steps.len();
    let key = steps.get(level).copied().flatten();
    let mut out: Vec<(String, Jsonb)> = Vec::with_capacity(m.len() + 1);
    let mut done = key.is_none();
    for (k, v) in m {
        if !done && Some(k.as_str()) == key {
            done = true;
            if last {
                if matches!(edit, Edit::InsertBefore | Edit::InsertAfter) {
                    return Err(err!(InvalidParameterValue, "cannot replace existing key")
                        .with_hint("Try using the function jsonb_set to replace key value."));
                }
                if let (false, Some(n)) = (edit == Edit::Delete, new) {
                    out.push((k.clone(), n.clone()));
                }
            } else {
                out.push((k.clone(), set_path(v, steps, level + 1, new, edit)?));
            }
        } else {
            out.push((k.clone(), v.clone()));
        }
    }
    if !done && last && edit.adds() {
        if let (Some(k), Some(n)) = (key, new) {
            out.push((k.to_string(), n.clone()));
        }
    }
    Ok(Jsonb::object(out))
}

fn set_in_array(
    items: &[Jsonb],
    steps: &[Option<&str>],
    level: usize,
    new: Option<&Jsonb>,
    edit: Edit,
) -> Result<Jsonb> {
    let n = items.len() as i64;
    let last = level + 1 == steps.len();
    let mut idx = match steps.get(level).copied().flatten() {
        Some(s) => parse_index(s).ok_or_else(|| {
            err!(
                InvalidTextRepresentation,
                "path element at position {} is not an integer: \"{s}\"",
                level + 1
            )
        })?,
        None => n,
    };
    let mut prepend = false;
    if idx < 0 {
        if -idx > n {
            prepend = true;
        } else {
            idx += n;
        }
    }
    if idx > n {
        idx = n;
    }
    let mut out = Vec::with_capacity(items.len() + 1);
    let mut done = false;
    if (prepend || n == 0) && last && edit.adds() {
        out.extend(new.cloned());
        done = true;
    }
    for (i, v) in items.iter().enumerate() {
        if !prepend && i as i64 == idx {
            if last {
                if matches!(edit, Edit::InsertBefore | Edit::Create) {
                    out.extend(new.cloned());
                }
                if matches!(edit, Edit::InsertBefore | Edit::InsertAfter) {
                    out.push(v.clone());
                }
                if matches!(edit, Edit::InsertAfter | Edit::Replace) {
                    out.extend(new.cloned());
                }
                done = true;
            } else {
                out.push(set_path(v, steps, level + 1, new, edit)?);
            }
        } else {
            out.push(v.clone());
        }
    }
    if edit.adds() && !done && last {
        out.extend(new.cloned());
    }
    Ok(Jsonb::Array(out))
}

/// `jsonb_strip_nulls`: object members whose value is null, at any depth.
pub fn strip_nulls(j: &Jsonb) -> Jsonb {
    match j {
        Jsonb::Object(m) => Jsonb::Object(
            m.iter()
                .filter(|(_, v)| !matches!(v, Jsonb::Null))
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        Jsonb::Array(items) => Jsonb::Array(items.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

/// A parsed `json` document and its text.
pub struct JsonDoc<'a> {
    /// The source text.
    pub text: &'a str,
    /// Its tree.
    pub root: Node,
}

impl<'a> JsonDoc<'a> {
    /// Parses a stored `json` value (already valid, so this cannot fail but
    /// for resource limits).
    pub fn parse(text: &'a str) -> Result<JsonDoc<'a>> {
        Ok(JsonDoc {
            text,
            root: parse::parse(text, Mode::Json)?,
        })
    }

    /// The original text of a node.
    pub fn text_of(&self, n: &Node) -> &'a str {
        &self.text[n.span.0..n.span.1]
    }

    /// `->>`'s text of a node: strings de-escaped, `null` as SQL NULL.
    pub fn as_text(&self, n: &Node) -> Option<String> {
        match &n.kind {
            Kind::Null => None,
            Kind::String(s) => Some(s.clone()),
            _ => Some(self.text_of(n).to_string()),
        }
    }
}

/// The node a path reaches in a `json` tree; of duplicate keys the last
/// counts, as PostgreSQL's json functions see it.
pub fn json_get<'n>(root: &'n Node, steps: &[Step<'_>]) -> Option<&'n Node> {
    let mut cur = root;
    for s in steps {
        cur = match (&cur.kind, s) {
            (Kind::Object(m), Step::Key(k)) => {
                m.iter().rev().find(|(mk, _)| mk == k).map(|p| &p.1)?
            }
            (Kind::Array(items), Step::Index(i)) => index_in(items.len(), *i).map(|i| &items[i])?,
            (Kind::Array(items), Step::Key(k)) => {
                index_in(items.len(), parse_index(k)?).map(|i| &items[i])?
            }
            _ => return None,
        };
    }
    Some(cur)
}

/// `json_typeof`'s name for a node.
pub fn node_type(n: &Node) -> &'static str {
    match n.kind {
        Kind::Null => "null",
        Kind::Bool(_) => "boolean",
        Kind::Number => "number",
        Kind::String(_) => "string",
        Kind::Array(_) => "array",
        Kind::Object(_) => "object",
    }
}
