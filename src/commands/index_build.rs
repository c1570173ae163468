//! The build of a new B-tree index (PostgreSQL's `index_build` with
//! nbtree's `btbuild`/`nbtsort.c`): scan the heap under the statement's
//! snapshot, encode each visible row's leaf key, sort the keys with an
//! external sort bounded by `maintenance_work_mem`
//! (`access::nbtree::sortbuild`), check uniqueness on the sorted stream and
//! write the tree bottom-up (`access::nbtree::build`, every page logged
//! whole).
//!
//! Parallel build: on a heap of at least `min_parallel_table_scan_size`
//! blocks, up to `max_parallel_maintenance_workers` worker threads and the leader
//! scan the heap together (blocks handed out in chunks,
//! `access::heap::ParallelBlocks`), each encoding and sorting its own keys
//! with an equal share of `maintenance_work_mem`, as PostgreSQL's
//! participants do; the leader then merges every participant's runs and
//! writes the tree alone. The result is the same tree whatever the split:
//! the merge order is the keys' order, and leaf keys are unique (they end
//! with the heap TID).
//!
//! HOT: an entry names the chain root of the version the build sees
//! (`access::heap::hot::entry_offset`), with that version's key. Older
//! snapshots never use the index (the catalog is versioned: they do not
//! see it); a version the build sees that a transaction committed since
//! the build's snapshot has updated would give its newer version an entry
//! under its own key, so the build fails with 40001 instead.
//!
//! Errors keep PostgreSQL's texts: a NULL in a primary key's column is
//! 23502, duplicates under a unique index 23505 `could not create unique
//! index` with the first duplicated key (in key order) as DETAIL. A failed
//! build leaves a partly written relation file that the transaction's
//! abort removes.

use std::path::PathBuf;
use std::sync::Arc;

use crate::access::heap::hot::{entry_offset, updated_since};
use crate::access::heap::scan::ParallelBlocks;
use crate::access::heap::tuple::{self, TupleDesc};
use crate::access::heap::HeapRelation;
use crate::access::nbtree::keys::{self, IndexDesc, TID_LEN};
use crate::access::nbtree::rowsize;
use crate::access::nbtree::sortbuild::{merge, KeySorter, SortedRuns};
use crate::access::nbtree::{BTree, BtLog};
use crate::catalog::{IndexDef, TableDef};
use crate::err;
use crate::error::Result;
use crate::storage::{BufferPool, RelFileNode};
use crate::txn::Snapshot;
use crate::types::{DataType, Value};

/// What a build needs besides the table and the index.
pub struct BuildEnv {
    /// The buffer pool the index is written through.
    pub pool: Arc<BufferPool>,
    /// The log its pages go to.
    pub log: Option<Arc<dyn BtLog>>,
    /// Where sort runs spill.
    pub temp_dir: PathBuf,
    /// `maintenance_work_mem` in bytes, shared by all participants.
    pub memory: usize,
    /// `max_parallel_maintenance_workers`.
    pub max_workers: usize,
    /// `min_parallel_table_scan_size` in blocks: smaller heaps are scanned
    /// by the leader alone.
    pub min_parallel_blocks: u32,
    /// The session's ring sizes: the heap is read through a bulk-read ring
    /// of its `bulkread_ring_size` when it needs one.
    pub ring_sizes: crate::storage::RingSizes,
}

/// What a build did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildReport {
    /// Index entries written.
    pub entries: u64,
    /// Participants that scanned the heap (the leader included).
    pub participants: usize,
    /// Sort runs that went to temporary files.
    pub spilled_runs: usize,
}

/// How many participants (leader included) scan a heap of `nblocks`
/// blocks: PostgreSQL's `plan_create_index_workers` (one worker from
/// `min_parallel_table_scan_size`, one more for each tripling), capped by
/// the setting, the cores, and 32 MB of `maintenance_work_mem` per
/// participant.
pub fn participants(nblocks: u32, env: &BuildEnv) -> usize {
    let mut workers = 0usize;
    let mut threshold = u64::from(env.min_parallel_blocks.max(1));
    while u64::from(nblocks) >= threshold && workers < env.max_workers {
        workers += 1;
        threshold = threshold.saturating_mul(3);
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    workers = workers.min(env.max_workers).min(cores.saturating_sub(1));
    while workers > 0 && env.memory / (workers + 1) < 32 << 20 {
        workers -= 1;
    }
    workers + 1
}

/// The per-row part of a build: how a visible heap tuple becomes a key.
struct KeyMaker<'a> {
    table: &'a TableDef,
    ix: &'a IndexDef,
    desc: &'a IndexDesc,
    tdesc: &'a TupleDesc,
    stored: Vec<usize>,
    ring_sizes: crate::storage::RingSizes,
    /// Every stored column is an integer type [`keys::encode_raw_int`]
    /// encodes from its tuple bytes.
    raw_ints: bool,
    /// When `raw_ints`, the index is not partial and every stored column
    /// sits at a fixed offset in a tuple without nulls: each stored
    /// column's offset from the tuple's data and width.
    fixed: Option<Vec<(usize, usize)>>,
    /// Attributes a tuple must have for `fixed` to apply.
    fixed_natts: usize,
}

impl KeyMaker<'_> {
    /// Encodes the stored columns of a deformed row straight from their
    /// tuple bytes ([`keys::encode_raw_int`]); false (and `key` cleared)
    /// when a datum does not qualify, for the general path to encode.
    /// Checks a primary key's columns for NULLs as the general path does.
    #[inline]
    fn encode_raw(&self, slots: &[Option<&[u8]>], key: &mut Vec<u8>) -> Result<bool> {
        for (i, (&c, col)) in self.stored.iter().zip(&self.desc.columns).enumerate() {
            if self.ix.primary && i < self.ix.columns.len() && slots[c].is_none() {
                return Err(err!(
                    NotNullViolation,
                    "column \"{}\" of relation \"{}\" contains null values",
                    self.table.columns[c].name,
                    self.table.name
                ));
            }
            if !keys::encode_raw_int(col, slots[c], key) {
                key.clear();
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Encodes the key of a tuple without nulls from the fixed offsets
    /// of its stored columns (PostgreSQL's `attcacheoff` path), skipping
    /// the deform; false (and `key` cleared) when `t` does not qualify.
    #[inline]
    fn encode_fixed(&self, fixed: &[(usize, usize)], t: &[u8], key: &mut Vec<u8>) -> bool {
        if tuple::infomask(t) & tuple::HEAP_HASNULL != 0 || tuple::natts(t) < self.fixed_natts {
            return false;
        }
        let Some(data) = t.get(tuple::hoff(t)..) else {
            return false;
        };
        for (&(off, width), col) in fixed.iter().zip(&self.desc.columns) {
            let raw = data.get(off..off + width);
            if raw.is_none() || !keys::encode_raw_int(col, raw, key) {
                key.clear();
                return false;
            }
        }
        true
    }

    /// One participant: reads the blocks `blocks` hands out (all of them
    /// when `None`) and sorts the keys of the rows `snap` sees.
    fn scan(
        &self,
        rel: &HeapRelation,
        snap: &Snapshot,
        blocks: Option<&ParallelBlocks>,
        sorter: &mut KeySorter,
    ) -> Result<()> {
        let mut scan = match blocks {
            Some(b) => rel.scan_shared(snap, b)?,
            None => rel.scan_with(snap, &self.ring_sizes)?,
        };
        let ncols = self.table.columns.len();
        let nkey = self.ix.columns.len();
        let mut vals: Vec<Value> = Vec::with_capacity(self.stored.len());
        let mut key = Vec::with_capacity(64);
        while let Some(r) = scan.next_page(|block, pg, visible| -> Result<()> {
            let mut slots = vec![None; ncols];
            let mut roots = None;
            for &off in visible {
                let Some(t) = crate::storage::page::get_item(pg, off) else {
                    continue;
                };
                // The entry names the version's HOT chain root, with the
                // key of the version the build sees.
                let tid = (
                    block,
                    entry_offset(&mut roots, pg, block, off, &self.table.name)?,
                );
                // A row updated after the snapshot was taken (before the
                // build's lock kept writers out): its live version would
                // be reached under this version's key.
                if updated_since(rel, t, block, off)? {
                    return Err(err!(
                        SerializationFailure,
                        "could not serialize access due to concurrent update"
                    ));
                }
                if let Some(fixed) = &self.fixed {
                    key.clear();
                    if self.encode_fixed(fixed, t, &mut key) {
                        keys::put_tid(&mut key, tid);
                        sorter.push(&key)?;
                        continue;
                    }
                }
                tuple::deform(t, self.tdesc, ncols, &mut slots)?;
                if !crate::exec::index_maint::predicate_holds_slots(self.table, self.ix, &slots)? {
                    continue;
                }
                key.clear();
                if self.raw_ints && self.encode_raw(&slots, &mut key)? {
                    keys::put_tid(&mut key, tid);
                    sorter.push(&key)?;
                    continue;
                }
                vals.clear();
                for &c in &self.stored {
                    vals.push(match slots[c] {
                        Some(b) => Value::decode(&self.table.columns[c].ty, b),
                        None => Value::Null,
                    });
                }
                if self.ix.primary {
                    if let Some(k) = (0..nkey).find(|&k| vals[k].is_null()) {
                        return Err(err!(
                            NotNullViolation,
                            "column \"{}\" of relation \"{}\" contains null values",
                            self.table.columns[self.stored[k]].name,
                            self.table.name
                        ));
                    }
                }
                key.clear();
                keys::encode_key(self.desc, &vals, &mut key)?;
                keys::put_tid(&mut key, tid);
                sorter.push(&key)?;
            }
            Ok(())
        })? {
            r?;
        }
        Ok(())
    }
}

/// Builds index `ix` of `table` (whose heap is `rel`) from the rows `snap`
/// sees, into the index's new, empty relation. `key_text` renders a row's
/// key columns for a uniqueness error's DETAIL (`Key (a)=(1)`).
pub fn build_index(
    env: &BuildEnv,
    rel: &HeapRelation,
    snap: &Snapshot,
    table: &TableDef,
    ix: &IndexDef,
    key_text: &dyn Fn(&[Value]) -> String,
) -> Result<BuildReport> {
    let desc = ix.desc(table);
    let tdesc = tuple::desc_of_types(table.columns.iter().map(|c| &c.ty))?;
    let stored: Vec<usize> = ix.stored_columns().collect();
    let raw_ints = desc.columns.iter().all(|c| {
        matches!(
            c.ty,
            DataType::Int2
                | DataType::Int4
                | DataType::Int8
                | DataType::Date
                | DataType::Timestamp(_)
        )
    });
    let fixed = (raw_ints && ix.predicate.is_none())
        .then(|| {
            stored
                .iter()
                .map(|&c| {
                    let width = usize::try_from(table.columns[c].ty.attlen()).ok()?;
                    tdesc.fixed_offset(c).map(|off| (off, width))
                })
                .collect::<Option<Vec<_>>>()
        })
        .flatten();
    let maker = KeyMaker {
        table,
        ix,
        desc: &desc,
        tdesc: &tdesc,
        fixed_natts: stored.iter().max().map_or(0, |&c| c + 1),
        stored,
        ring_sizes: env.ring_sizes,
        raw_ints,
        fixed,
    };
    let nblocks = rel.nblocks()?;
    let n = participants(nblocks, env);
    let share = env.memory / n;
    // Keys take about as much room as the rows they come from.
    let heap_bytes = nblocks as usize * crate::storage::BLCKSZ;
    let parts =
        if n == 1 {
            let mut sorter = KeySorter::new(share, env.temp_dir.clone());
            sorter.reserve(heap_bytes);
            maker.scan(rel, snap, None, &mut sorter)?;
            vec![sorter.finish()]
        } else {
            let blocks = ParallelBlocks::new(nblocks, n).with_ring_sizes(env.ring_sizes);
            let run = || -> Result<SortedRuns> {
                let mut sorter = KeySorter::new(share, env.temp_dir.clone());
                // Chunks are not split evenly: room for the whole heap's
                // keys (within the share; memory is touched only as keys
                // arrive), so that the entries never grow by copying.
                sorter.reserve(heap_bytes);
                maker.scan(rel, snap, Some(&blocks), &mut sorter)?;
                Ok(sorter.finish())
            };
            std::thread::scope(|s| {
                let workers: Vec<_> = (1..n).map(|_| s.spawn(run)).collect();
                let mut parts = vec![run()];
                for w in workers {
                    parts.push(w.join().unwrap_or_else(|_| {
                        Err(err!(InternalError, "index build worker panicked"))
                    }));
                }
                parts.into_iter().collect::<Result<Vec<_>>>()
            })?
        };
    let spilled_runs = parts.iter().map(|p| p.files.len()).sum();
    let mut unique = ix
        .unique
        .then(|| UniqueCheck::new(table, ix, &desc, key_text));
    let mut entries = 0u64;
    let names = Some((ix.name.as_str(), table.name.as_str()));
    BTree::build_with(
        env.pool.clone(),
        RelFileNode(ix.relfilenode),
        desc.clone(),
        env.log.clone(),
        |add| {
            merge(&parts, &mut |k| {
                if let Some(u) = unique.as_mut() {
                    u.next(k)?;
                }
                rowsize::check(&desc, k, names, RelFileNode(ix.relfilenode))?;
                entries += 1;
                add(k)
            })
        },
    )?;
    Ok(BuildReport {
        entries,
        participants: n,
        spilled_runs,
    })
}

/// The uniqueness check of a build, on the sorted keys: two neighbours
/// equal in all key columns, neither with a NULL there, are PostgreSQL's
/// `could not create unique index` (the first such pair in key order).
struct UniqueCheck<'a> {
    table: &'a TableDef,
    ix: &'a IndexDef,
    desc: &'a IndexDesc,
    key_text: &'a dyn Fn(&[Value]) -> String,
    prev: Vec<u8>,
    /// Without INCLUDE columns the key columns are all but the TID.
    plain: bool,
}

impl<'a> UniqueCheck<'a> {
    fn new(
        table: &'a TableDef,
        ix: &'a IndexDef,
        desc: &'a IndexDesc,
        key_text: &'a dyn Fn(&[Value]) -> String,
    ) -> Self {
        UniqueCheck {
            table,
            ix,
            desc,
            key_text,
            prev: Vec::new(),
            plain: ix.include.is_empty(),
        }
    }

    /// The end of the key columns in a leaf key.
    fn key_end(&self, k: &[u8]) -> Result<usize> {
        if self.plain {
            return Ok(k.len().saturating_sub(TID_LEN));
        }
        Ok(keys::column_ends(self.desc, k)?[self.ix.columns.len() - 1])
    }

    fn next(&mut self, k: &[u8]) -> Result<()> {
        if !self.prev.is_empty() {
            let (la, lb) = (self.key_end(&self.prev)?, self.key_end(k)?);
            if self.prev[..la] == k[..lb] && !self.has_null(k)? {
                return Err(self.duplicated());
            }
        }
        self.prev.clear();
        self.prev.extend_from_slice(k);
        Ok(())
    }

    /// Whether a key column of `k` is NULL.
    fn has_null(&self, k: &[u8]) -> Result<bool> {
        let (vals, _) = keys::decode_key(self.desc, k)?;
        Ok(vals[..self.ix.columns.len()].iter().any(Value::is_null))
    }

    fn duplicated(&self) -> crate::error::Error {
        let detail = keys::decode_key(self.desc, &self.prev).map(|(vals, _)| {
            let mut row = vec![Value::Null; self.table.columns.len()];
            for (v, c) in vals.into_iter().zip(self.ix.stored_columns()) {
                row[c] = v;
            }
            format!("{} is duplicated.", (self.key_text)(&row))
        });
        match detail {
            Ok(d) => err!(
                UniqueViolation,
                "could not create unique index \"{}\"",
                self.ix.name
            )
            .with_detail(d),
            Err(e) => e,
        }
    }
}
