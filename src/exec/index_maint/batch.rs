//! Batched index entries for statements that add many rows (COPY FROM,
//! INSERT ... SELECT): the entries of a batch of new tuples are collected
//! per index ([`PendingEntries`]), sorted by key and inserted in key order,
//! so that consecutive keys land on the same leaf and share one descent
//! (`BTree::insert_sorted`).
//!
//! Unique indexes keep PostgreSQL's row-at-a-time semantics. The sorted
//! entries of one key form a group; under the key's lock the index is
//! searched once for a holder (a live row: conflict; a running inserter or
//! deleter: wait for it and search again), and the group's first entry is
//! inserted when nothing conflicts. Inserting rows one at a time would
//! have failed at the earliest row (in arrival order) that meets a live
//! holder, or that repeats a key an earlier row of the statement brought:
//! so each group yields its candidate (its first row with a holder, else
//! its second row), and the earliest candidate over all unique indexes is
//! the 23505 error, with PostgreSQL's text and the row's own key values
//! (read back from its heap tuple). A failed statement aborts its
//! transaction: the entries already made point at dead tuples.

use super::*;

/// One new entry: its full leaf key, where its key columns end, whether
/// one of them is NULL (never a conflict) and the row's arrival number.
struct Pending {
    key: Vec<u8>,
    prefix: usize,
    null: bool,
    seq: u32,
    tid: Tid,
}

impl AsRef<[u8]> for Pending {
    fn as_ref(&self) -> &[u8] {
        &self.key
    }
}

/// The entries of new tuples not yet in their indexes.
pub(crate) struct PendingEntries {
    per_index: Vec<Vec<Pending>>,
    rows: u32,
}

impl PendingEntries {
    /// Rows collected since the last flush.
    pub(crate) fn rows(&self) -> usize {
        self.rows as usize
    }
}

/// The earliest failing row found so far: arrival number, index position,
/// tuple.
type Violation = (u32, usize, Tid);

impl IndexInserter<'_> {
    /// An empty batch for this table's indexes.
    pub(crate) fn pending(&self) -> PendingEntries {
        PendingEntries {
            per_index: self.trees.iter().map(|_| Vec::new()).collect(),
            rows: 0,
        }
    }

    /// Collects the entries of the tuple at `tid` whose values are `row`.
    pub(crate) fn add(&self, p: &mut PendingEntries, row: &[Value], tid: Tid) -> Result<()> {
        for (pos, (ix, tree)) in self.table.indexes.iter().zip(&self.trees).enumerate() {
            if !super::predicate_holds(self.table, ix, row)? {
                continue;
            }
            let vals = index_values(ix, row);
            let mut key = Vec::with_capacity(32);
            keys::encode_key(tree.desc(), &vals, &mut key)?;
            let (prefix, null) = if ix.unique {
                let ends = column_ends(tree.desc(), &key)?;
                let null = ix.columns.iter().any(|c| row[c.column].is_null());
                (ends[ix.columns.len() - 1], null)
            } else {
                (0, false)
            };
            keys::put_tid(&mut key, tid.pair());
            p.per_index[pos].push(Pending {
                key,
                prefix,
                null,
                seq: p.rows,
                tid,
            });
        }
        p.rows += 1;
        Ok(())
    }

    /// Inserts the collected entries, each index's in key order, with the
    /// uniqueness checks (see the module doc); empties the batch.
    pub(crate) fn flush(
        &self,
        ctx: &ModifyContext<'_>,
        rel: &HeapRelation,
        p: &mut PendingEntries,
    ) -> Result<()> {
        let mut first: Option<Violation> = None;
        for pos in 0..self.trees.len() {
            let mut list = std::mem::take(&mut p.per_index[pos]);
            list.sort_unstable_by(|a, b| a.key.cmp(&b.key));
            if self.table.indexes[pos].unique {
                if let Some((seq, tid)) = self.insert_unique_sorted(ctx, rel, pos, &list)? {
                    if first.map_or(true, |f| (seq, pos) < (f.0, f.1)) {
                        first = Some((seq, pos, tid));
                    }
                }
            } else {
                self.trees[pos].insert_sorted(&list)?;
            }
            list.clear();
            p.per_index[pos] = list;
        }
        p.rows = 0;
        match first {
            None => Ok(()),
            Some((_, pos, tid)) => Err(self.violation(rel, pos, tid)),
        }
    }

    /// The sorted entries of unique index `pos`: inserts those that
    /// conflict with nothing; returns the earliest failing row.
    fn insert_unique_sorted(
        &self,
        ctx: &ModifyContext<'_>,
        rel: &HeapRelation,
        pos: usize,
        list: &[Pending],
    ) -> Result<Option<(u32, Tid)>> {
        let (ix, tree) = (&self.table.indexes[pos], &self.trees[pos]);
        let mut failed: Option<(u32, Tid)> = None;
        let mut i = 0;
        while i < list.len() {
            let e = &list[i];
            let prefix = &e.key[..e.prefix];
            let mut j = i + 1;
            if !e.null {
                while j < list.len() && !list[j].null && list[j].key[..list[j].prefix] == *prefix {
                    j += 1;
                }
            }
            let group = &list[i..j];
            i = j;
            if e.null {
                tree.insert_key(&e.key)?;
                continue;
            }
            let lock = key_lock(ix.relfilenode, prefix);
            let held = loop {
                let held = lock.lock().unwrap_or_else(|p| p.into_inner());
                match self.first_holder(rel, pos, prefix)? {
                    Holder::Wait(x) => {
                        drop(held);
                        ctx.wait_for(x)?;
                    }
                    Holder::Live(_) => {
                        let g = group.iter().min_by_key(|g| g.seq).map(|g| (g.seq, g.tid));
                        break (held, g);
                    }
                    Holder::None => {
                        let mut seqs: Vec<(u32, Tid)> =
                            group.iter().map(|g| (g.seq, g.tid)).collect();
                        seqs.sort_unstable_by_key(|g| g.0);
                        break (held, seqs.get(1).copied());
                    }
                }
            };
            match held.1 {
                Some(v) => {
                    if failed.map_or(true, |f| v.0 < f.0) {
                        failed = Some(v);
                    }
                }
                None => tree.insert_key(&e.key)?,
            }
            drop(held.0);
        }
        Ok(failed)
    }

    /// Whether any entry of index `pos` with key columns `prefix` leads to
    /// a live row, or to one a running transaction decides.
    fn first_holder(&self, rel: &HeapRelation, pos: usize, prefix: &[u8]) -> Result<Holder> {
        let (ix, tree) = (&self.table.indexes[pos], &self.trees[pos]);
        for t in tree.lookup(prefix)? {
            let t = Tid {
                block: t.0,
                offset: t.1,
            };
            match self.holder(rel, ix, tree, t, prefix)? {
                Holder::None => {}
                h => return Ok(h),
            }
        }
        Ok(Holder::None)
    }

    /// PostgreSQL's unique violation for the new tuple at `tid` in index
    /// `pos`, its key shown from the tuple itself.
    fn violation(&self, rel: &HeapRelation, pos: usize, tid: Tid) -> crate::error::Error {
        let ix = &self.table.indexes[pos];
        let row = (|| -> Result<Vec<Value>> {
            let buf = rel
                .pool()
                .read_buffer(rel.rel(), ForkNumber::Main, tid.block, None)?;
            let g = buf.read();
            let t = crate::storage::page::get_item(&g[..], tid.offset)
                .ok_or_else(|| err!(InternalError, "new tuple {tid:?} is gone"))?;
            tuple_values(self.table, &self.desc, t)
        })();
        match row {
            Ok(row) => err!(
                UniqueViolation,
                "duplicate key value violates unique constraint \"{}\"",
                ix.name
            )
            .with_detail(format!(
                "{} already exists.",
                key_text(self.table, ix, &row)
            )),
            Err(e) => e,
        }
    }
}
