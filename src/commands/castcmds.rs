//! CREATE CAST and DROP CAST (PostgreSQL's `functioncmds.c` `CreateCast`
//! and `DropCast`): a cast between types at least one of which is a base
//! type made by CREATE TYPE, kept in the catalog (`catalog::cast`) and
//! applied by the binder. `WITHOUT FUNCTION` asks that both types be
//! physically the same (length and alignment of their storage).

use heapdb_grammar::ast;

use super::basetype::TypeRef;
use super::context::DdlContext;
use crate::catalog::CastDef;
use crate::err;
use crate::error::Result;
use crate::types::cast::cast_kind;

impl DdlContext<'_> {
    /// CREATE CAST; the WARNING of a cast from or to a domain.
    pub fn create_cast(&mut self, c: &ast::CreateCast) -> Result<Vec<String>> {
        let source = self.existing_type(&c.source)?;
        let target = self.existing_type(&c.target)?;
        let (sname, tname) = (source.name(), target.name());
        for (t, which) in [(&source, "source"), (&target, "target")] {
            if t.is_shell() {
                return Err(err!(
                    UndefinedObject,
                    "type \"{}\" is only a shell",
                    t.name()
                ));
            }
            if t.is_pseudo() {
                return Err(err!(
                    WrongObjectType,
                    "{which} data type {} is a pseudo-type",
                    t.name()
                ));
            }
        }
        let mut warnings = Vec::new();
        if matches!(source, TypeRef::Domain(_)) {
            warnings.push("cast will be ignored because the source data type is a domain".into());
        } else if matches!(target, TypeRef::Domain(_)) {
            warnings.push("cast will be ignored because the target data type is a domain".into());
        }
        let method = match &c.method {
            ast::CastMethod::Binary => {
                let (s, t) = (source.storage(), target.storage());
                let physical =
                    |d: Option<crate::types::DataType>| d.map(|d| (d.attlen(), d.attalign()));
                if physical(s) != physical(t) {
                    return Err(err!(
                        InvalidObjectDefinition,
                        "source and target data types are not physically compatible"
                    ));
                }
                'b'
            }
            ast::CastMethod::Inout => 'i',
            ast::CastMethod::Function(_) => {
                return Err(err!(
                    FeatureNotSupported,
                    "CREATE CAST ... WITH FUNCTION is not supported"
                ))
            }
        };
        if sname == tname {
            return Err(err!(
                InvalidObjectDefinition,
                "source data type and target data type are the same"
            ));
        }
        let cv = self.view();
        let builtin = match (&source, &target) {
            (TypeRef::Builtin(s), TypeRef::Builtin(t)) => Some(cast_kind(s, t).is_some()),
            _ => None,
        };
        if builtin == Some(true) || self.catalog.lookup_cast(&cv, &sname, &tname).is_some() {
            return Err(err!(
                DuplicateObject,
                "cast from type {sname} to type {tname} already exists"
            ));
        }
        if builtin == Some(false) {
            return Err(err!(
                FeatureNotSupported,
                "casts between two built-in types are not supported"
            ));
        }
        let def = CastDef {
            oid: self.catalog.next_oid(),
            source: sname,
            target: tname,
            method,
            func: None,
            context: match c.context {
                ast::CastWhen::Explicit => 'e',
                ast::CastWhen::Assignment => 'a',
                ast::CastWhen::Implicit => 'i',
            },
        };
        self.catalog.create_cast(self.xid, def);
        *self.catalog_changed = true;
        Ok(warnings)
    }

    /// DROP CAST [IF EXISTS] (a AS b); the NOTICE of a cast skipped.
    pub fn drop_cast(&mut self, d: &ast::DropCast) -> Result<Vec<String>> {
        let mut missing = None;
        for t in [&d.source, &d.target] {
            if missing.is_none() && self.resolve_type(t)?.is_none() {
                missing = Some(super::basetype::written_name(t));
            }
        }
        if let Some(m) = missing {
            if d.if_exists {
                return Ok(vec![format!("type \"{m}\" does not exist, skipping")]);
            }
            return Err(err!(UndefinedObject, "type \"{m}\" does not exist"));
        }
        let sname = self.existing_type(&d.source)?.name();
        let tname = self.existing_type(&d.target)?.name();
        let cv = self.view();
        let Some(cast) = self.catalog.lookup_cast(&cv, &sname, &tname) else {
            if d.if_exists {
                let written = super::functioncmds::written_type;
                return Ok(vec![format!(
                    "cast from type {} to type {} does not exist, skipping",
                    written(&d.source),
                    written(&d.target)
                )]);
            }
            return Err(err!(
                UndefinedObject,
                "cast from type {sname} to type {tname} does not exist"
            ));
        };
        self.catalog.drop_cast(&cv, self.xid, cast.oid)?;
        *self.catalog_changed = true;
        Ok(Vec::new())
    }
}
