//! CREATE TYPE (shell and base types), CREATE FUNCTION ... LANGUAGE
//! internal and DROP TYPE (PostgreSQL's `typecmds.c` `DefineType` and
//! `RemoveObjects`, `functioncmds.c` for internal functions).
//!
//! A shell type (`CREATE TYPE name`) is a name reserved for a base type
//! whose I/O functions are still to be declared; those functions are
//! `LANGUAGE internal` ones naming a built-in routine ([`ROUTINES`]), and
//! `CREATE TYPE name (INPUT = f, OUTPUT = g, ...)` completes the shell,
//! its values stored as those of the routines' built-in type. DROP TYPE
//! removes base and shell types with the functions and casts that name
//! them (CASCADE), or refuses (2BP01) listing them as PostgreSQL does.
//! Every change is a catalog version of the statement's transaction.

use std::sync::Arc;

use heapdb_grammar::ast;

use super::context::DdlContext;
use crate::catalog::{BaseTypeDef, DomainDef, InternalFuncDef};
use crate::err;
use crate::error::Result;
use crate::plan::bind::data_type;
use crate::types::DataType;

/// The built-in I/O routines a `LANGUAGE internal` function may name:
/// the routine, the type whose text form it reads or writes, and whether
/// it is an input (text to value) routine.
pub const ROUTINES: &[(&str, DataType, bool)] = &[
    ("boolin", DataType::Bool, true),
    ("boolout", DataType::Bool, false),
    ("int2in", DataType::Int2, true),
    ("int2out", DataType::Int2, false),
    ("int4in", DataType::Int4, true),
    ("int4out", DataType::Int4, false),
    ("int8in", DataType::Int8, true),
    ("int8out", DataType::Int8, false),
    ("float4in", DataType::Float4, true),
    ("float4out", DataType::Float4, false),
    ("float8in", DataType::Float8, true),
    ("float8out", DataType::Float8, false),
    ("numeric_in", DataType::Numeric(None), true),
    ("numeric_out", DataType::Numeric(None), false),
    ("textin", DataType::Text, true),
    ("textout", DataType::Text, false),
    ("byteain", DataType::Bytea, true),
    ("byteaout", DataType::Bytea, false),
    ("date_in", DataType::Date, true),
    ("date_out", DataType::Date, false),
    ("interval_in", DataType::Interval, true),
    ("interval_out", DataType::Interval, false),
];

/// The built-in routine `name`, if heapdb has it.
pub fn routine(name: &str) -> Option<(DataType, bool)> {
    ROUTINES
        .iter()
        .find(|r| r.0 == name)
        .map(|&(_, t, input)| (t, input))
}

/// A type named by these statements.
#[derive(Debug, Clone)]
pub enum TypeRef {
    /// A built-in type (its modifier dropped).
    Builtin(DataType),
    /// A domain.
    Domain(Arc<DomainDef>),
    /// A base or shell type.
    Base(Arc<BaseTypeDef>),
    /// `cstring`, the pseudo-type of I/O functions' text.
    Cstring,
}

impl TypeRef {
    /// The name PostgreSQL's messages give it (`format_type`).
    pub fn name(&self) -> String {
        match self {
            TypeRef::Builtin(t) => t.to_string(),
            TypeRef::Domain(d) => d.name.clone(),
            TypeRef::Base(b) => b.name.clone(),
            TypeRef::Cstring => "cstring".into(),
        }
    }

    /// Whether it is a shell type.
    pub fn is_shell(&self) -> bool {
        matches!(self, TypeRef::Base(b) if b.storage.is_none())
    }

    /// Whether it is a pseudo-type (`cstring` or a shell).
    pub fn is_pseudo(&self) -> bool {
        matches!(self, TypeRef::Cstring) || self.is_shell()
    }

    /// The built-in type whose storage its values have.
    pub fn storage(&self) -> Option<DataType> {
        match self {
            TypeRef::Builtin(t) => Some(*t),
            TypeRef::Domain(d) => Some(d.base.without_typmod()),
            TypeRef::Base(b) => b.storage,
            TypeRef::Cstring => None,
        }
    }
}

/// A type name written as a plain identifier (`DROP TYPE integer`): the
/// SQL keyword types by their keyword, any other as a name.
fn keyword_type(name: &str) -> ast::DataType {
    match name {
        "integer" => ast::DataType::Integer,
        "smallint" => ast::DataType::SmallInt,
        "bigint" => ast::DataType::BigInt,
        "real" => ast::DataType::Real,
        "boolean" => ast::DataType::Boolean,
        "text" => ast::DataType::Text,
        "interval" => ast::DataType::Interval,
        _ => ast::DataType::Named(name.to_string()),
    }
}

/// The name a type is written with, for "does not exist" errors.
pub fn written_name(t: &ast::DataType) -> String {
    match t {
        ast::DataType::Named(n) => n.clone(),
        other => other.to_string(),
    }
}

impl DdlContext<'_> {
    /// The type `t` names, `None` when there is none of that name.
    pub fn resolve_type(&self, t: &ast::DataType) -> Result<Option<TypeRef>> {
        if let ast::DataType::Named(n) = t {
            if n == "cstring" {
                return Ok(Some(TypeRef::Cstring));
            }
            let cv = self.view();
            if let Some(b) = self.catalog.lookup_base_type(&cv, n) {
                return Ok(Some(TypeRef::Base(b)));
            }
            if let Some(d) = self.catalog.lookup_domain(&cv, n) {
                return Ok(Some(TypeRef::Domain(d)));
            }
            if DataType::from_name(n).is_none() && data_type(t).is_err() {
                return Ok(None);
            }
        }
        Ok(Some(TypeRef::Builtin(data_type(t)?.without_typmod())))
    }

    /// As [`Self::resolve_type`], the missing type PostgreSQL's 42704.
    pub fn existing_type(&self, t: &ast::DataType) -> Result<TypeRef> {
        self.resolve_type(t)?.ok_or_else(|| {
            err!(
                UndefinedObject,
                "type \"{}\" does not exist",
                written_name(t)
            )
        })
    }

    /// Whether a type (of any kind) named `name` exists.
    fn type_exists(&self, name: &str) -> Result<bool> {
        self.resolve_type(&ast::DataType::Named(name.to_string()))
            .map(|t| t.is_some())
    }

    /// CREATE TYPE name: a shell type.
    fn create_shell_type(&mut self, name: &str) -> Result<()> {
        if self.type_exists(name)? {
            return Err(err!(DuplicateObject, "type \"{name}\" already exists"));
        }
        let def = BaseTypeDef {
            comment: None,
            oid: self.catalog.next_oid(),
            name: name.to_string(),
            storage: None,
            input: None,
            output: None,
        };
        self.catalog.create_base_type(self.xid, def);
        *self.catalog_changed = true;
        Ok(())
    }

    /// CREATE TYPE [name] or CREATE TYPE name (params); the WARNINGs of
    /// parameters not recognized.
    pub fn define_type(&mut self, d: &ast::DefineType) -> Result<Vec<String>> {
        let name = &d.name.name;
        let Some(params) = &d.params else {
            self.create_shell_type(name)?;
            return Ok(Vec::new());
        };
        let cv = self.view();
        let shell = match self.catalog.lookup_base_type(&cv, name) {
            Some(b) if b.storage.is_none() => Some(b),
            Some(_) => return Err(err!(DuplicateObject, "type \"{name}\" already exists")),
            None if self.type_exists(name)? => {
                return Err(err!(DuplicateObject, "type \"{name}\" already exists"))
            }
            None => None,
        };
        let (mut input, mut output, mut warnings) = (None, None, Vec::new());
        for p in params {
            let arg_name = || match &p.arg {
                Some(ast::DefArg::Type(t)) => Ok(written_name(t)),
                Some(ast::DefArg::Str(s)) => Ok(s.clone()),
                _ => Err(err!(
                    SyntaxError,
                    "{} requires a parameter",
                    p.name.to_uppercase()
                )),
            };
            match p.name.as_str() {
                "input" => input = Some(arg_name()?),
                "output" => output = Some(arg_name()?),
                "like" => {
                    let Some(ast::DefArg::Type(t)) = &p.arg else {
                        return Err(err!(SyntaxError, "LIKE requires a parameter"));
                    };
                    self.existing_type(t)?;
                }
                "internallength" | "passedbyvalue" | "alignment" | "storage" | "category"
                | "preferred" | "default" | "element" | "delimiter" | "collatable" | "receive"
                | "send" | "typmod_in" | "typmod_out" | "analyze" | "subscript" => {}
                other => warnings.push(format!("type attribute \"{other}\" not recognized")),
            }
        }
        let Some(input) = input else {
            return Err(err!(
                InvalidObjectDefinition,
                "type input function must be specified"
            ));
        };
        let Some(output) = output else {
            return Err(err!(
                InvalidObjectDefinition,
                "type output function must be specified"
            ));
        };
        let storage = self.check_io_functions(name, &input, &output)?;
        let oid = match &shell {
            Some(s) => s.oid,
            None => self.catalog.next_oid(),
        };
        let def = BaseTypeDef {
            comment: None,
            oid,
            name: name.clone(),
            storage: Some(storage),
            input: Some(input),
            output: Some(output),
        };
        match shell {
            Some(s) => self
                .catalog
                .replace_base_type(&cv, self.xid, s.oid, Some(def))?,
            None => self.catalog.create_base_type(self.xid, def),
        }
        *self.catalog_changed = true;
        Ok(warnings)
    }

    /// Finds type `name`'s input function `input(cstring)` and output
    /// function `output(name)` (PostgreSQL's `findTypeInputFunction`,
    /// `findTypeOutputFunction`) and checks their results; the storage
    /// their built-in routines give the type's values.
    fn check_io_functions(&self, name: &str, input: &str, output: &str) -> Result<DataType> {
        let funcs = self.catalog.internal_functions(&self.view());
        let find = |f: &str, arg: &str| {
            funcs
                .iter()
                .find(|x| x.name == f && x.args.len() == 1 && x.args[0] == arg)
                .cloned()
                .ok_or_else(|| err!(UndefinedFunction, "function {f}({arg}) does not exist"))
        };
        let fin = find(input, "cstring")?;
        if fin.ret != name {
            return Err(err!(
                InvalidObjectDefinition,
                "type input function {input} must return type {name}"
            ));
        }
        let fout = find(output, name)?;
        if fout.ret != "cstring" {
            return Err(err!(
                InvalidObjectDefinition,
                "type output function {output} must return type cstring"
            ));
        }
        let (Some((tin, true)), Some((tout, false))) =
            (routine(&fin.prosrc), routine(&fout.prosrc))
        else {
            return Err(err!(
                FeatureNotSupported,
                "type {name}'s input and output functions must name a built-in input and output routine"
            ));
        };
        if tin != tout {
            return Err(err!(
                FeatureNotSupported,
                "input and output routines of different types are not supported"
            ));
        }
        Ok(tin)
    }
}

/// Whether CREATE FUNCTION `c` is `LANGUAGE internal`.
pub fn is_internal(c: &ast::CreateFunction) -> bool {
    c.options
        .iter()
        .any(|o| matches!(o, ast::FunctionOption::Language(l) if l == "internal"))
}

impl DdlContext<'_> {
    /// CREATE FUNCTION ... LANGUAGE internal AS 'routine': the NOTICEs of
    /// shell types it names (and of the shell it makes for a result type
    /// not yet defined).
    pub fn create_internal_function(&mut self, c: &ast::CreateFunction) -> Result<Vec<String>> {
        let mut notices = Vec::new();
        let mut args = Vec::with_capacity(c.args.len());
        for a in &c.args {
            let Some(t) = self.resolve_type(&a.data_type)? else {
                return Err(err!(
                    UndefinedObject,
                    "type {} does not exist",
                    written_name(&a.data_type)
                ));
            };
            if t.is_shell() {
                notices.push(format!("argument type {} is only a shell", t.name()));
            }
            args.push(t.name());
        }
        let ret = match &c.returns {
            Some(ast::FunctionReturns::Type(t)) => match self.resolve_type(t)? {
                Some(r) => {
                    if r.is_shell() {
                        notices.push(format!("return type {} is only a shell", r.name()));
                    }
                    r.name()
                }
                None => {
                    let name = written_name(t);
                    notices.push(format!(
                        "type \"{name}\" is not yet defined\nDETAIL:  Creating a shell type definition."
                    ));
                    self.create_shell_type(&name)?;
                    name
                }
            },
            Some(_) => {
                return Err(err!(
                    FeatureNotSupported,
                    "internal functions returning sets are not supported"
                ))
            }
            None => {
                return Err(err!(
                    InvalidFunctionDefinition,
                    "function result type must be specified"
                ))
            }
        };
        let bodies: Vec<&String> = c
            .options
            .iter()
            .filter_map(|o| match o {
                ast::FunctionOption::As(b) => Some(b),
                _ => None,
            })
            .collect();
        let prosrc = match bodies[..] {
            [] => {
                return Err(err!(
                    InvalidFunctionDefinition,
                    "no function body specified"
                ))
            }
            [b] => b.trim().to_string(),
            _ => return Err(err!(SyntaxError, "conflicting or redundant options")),
        };
        if routine(&prosrc).is_none() {
            return Err(err!(
                UndefinedFunction,
                "there is no built-in function named \"{prosrc}\""
            ));
        }
        let name = c.name.name.clone();
        let cv = self.view();
        let existing = self
            .catalog
            .internal_functions(&cv)
            .into_iter()
            .find(|f| f.name == name && f.args == args);
        if let Some(old) = existing {
            if !c.or_replace {
                return Err(err!(
                    DuplicateFunction,
                    "function \"{name}\" already exists with same argument types"
                ));
            }
            self.catalog
                .drop_internal_function(&cv, self.xid, old.oid)?;
        }
        let def = InternalFuncDef {
            oid: self.catalog.next_oid(),
            name,
            args,
            ret,
            prosrc,
        };
        self.catalog.create_internal_function(self.xid, def);
        *self.catalog_changed = true;
        Ok(notices)
    }

    /// DROP TYPE [IF EXISTS] name, ... [CASCADE]: the NOTICEs of types
    /// skipped and of objects dropped with them.
    pub fn drop_type(&mut self, d: &ast::DropType) -> Result<Vec<String>> {
        let mut notices = Vec::new();
        for n in &d.names {
            let name = &n.name;
            match self.resolve_type(&keyword_type(name))? {
                None if d.if_exists => {
                    notices.push(format!("type \"{name}\" does not exist, skipping"))
                }
                None => return Err(err!(UndefinedObject, "type \"{name}\" does not exist")),
                Some(TypeRef::Domain(_)) => {
                    let one = ast::DropDomain {
                        if_exists: false,
                        names: vec![n.clone()],
                        cascade: d.cascade,
                    };
                    notices.extend(self.drop_domain(&one)?);
                }
                Some(TypeRef::Base(b)) => self.drop_base_type(&b, d.cascade, &mut notices)?,
                Some(t) => {
                    return Err(err!(
                        DependentObjectsStillExist,
                        "cannot drop type {} because it is required by the database system",
                        t.name()
                    ))
                }
            }
        }
        Ok(notices)
    }

    /// Drops base type `b` and, with `cascade`, the functions and casts
    /// naming it (in creation order, as PostgreSQL lists them).
    fn drop_base_type(
        &mut self,
        b: &BaseTypeDef,
        cascade: bool,
        notices: &mut Vec<String>,
    ) -> Result<()> {
        let cv = self.view();
        let name = &b.name;
        let mut deps: Vec<(u32, String, bool)> = Vec::new();
        for f in self.catalog.internal_functions(&cv) {
            if f.ret == *name || f.args.contains(name) {
                deps.push((f.oid, format!("function {}", f.signature()), true));
            }
        }
        for c in self.catalog.casts(&cv) {
            if c.source == *name || c.target == *name {
                deps.push((c.oid, c.described(), false));
            }
        }
        deps.sort_by_key(|d| d.0);
        if !deps.is_empty() && !cascade {
            let detail: Vec<String> = deps
                .iter()
                .map(|d| format!("{} depends on type {name}", d.1))
                .collect();
            return Err(err!(
                DependentObjectsStillExist,
                "cannot drop type {name} because other objects depend on it"
            )
            .with_detail(detail.join("\n"))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
        }
        match &deps[..] {
            [] => {}
            [one] => notices.push(format!("drop cascades to {}", one.1)),
            many => {
                let detail: Vec<String> = many
                    .iter()
                    .map(|d| format!("drop cascades to {}", d.1))
                    .collect();
                notices.push(format!(
                    "drop cascades to {} other objects\nDETAIL:  {}",
                    many.len(),
                    detail.join("\n")
                ));
            }
        }
        for (oid, _, is_func) in deps {
            if is_func {
                self.catalog.drop_internal_function(&cv, self.xid, oid)?;
            } else {
                self.catalog.drop_cast(&cv, self.xid, oid)?;
            }
        }
        self.catalog.replace_base_type(&cv, self.xid, b.oid, None)?;
        *self.catalog_changed = true;
        Ok(())
    }
}
