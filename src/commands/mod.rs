//! Utility commands that work on whole relations rather than on rows:
//! VACUUM ([`vacuum`]), ANALYZE ([`analyze`], with the statistics it
//! computes in [`stats`]), the build of a new index ([`index_build`]), and
//! the DDL: CREATE TABLE [AS], DROP TABLE and TRUNCATE ([`createtable`]),
//! CREATE/DROP VIEW ([`view`]), the index commands ([`indexcmds`]),
//! ALTER TABLE ([`tablecmds`]), CHECK constraints ([`checkcmds`]), base
//! types and internal functions ([`basetype`]), casts ([`castcmds`]) and
//! descriptions ([`comment`]).
//!
//! The DDL commands take a [`context::DdlContext`] (the statement's
//! transaction, snapshot, catalog, pool and log, as explicit values); the
//! maintenance ones work over a [`HeapRelation`](crate::access::heap::HeapRelation)
//! and return a report. The session resolves names, runs them inside its
//! transaction handling and turns what they return into command tags,
//! NOTICEs and VERBOSE `INFO` messages. Nothing here prints or assumes a
//! single client.

pub mod altercol;
pub mod alterfunction;
pub mod analyze;
pub mod basetype;
pub mod castcmds;
pub mod checkcmds;
pub mod comment;
pub mod context;
pub mod createtable;
pub mod fkey;
pub mod functioncmds;
pub mod index_build;
pub mod indexcmds;
pub mod inherit;
pub mod inspect_btree;
pub mod opclass;
pub mod operatorcmds;
pub mod readahead;
pub mod seqfuncs;
pub mod sequencecmds;
pub mod stats;
pub mod tablecmds;
pub mod typecmds;
pub mod vacuum;
pub mod view;
