//! `WITH RECURSIVE`'s operators: the Recursive Union and the WorkTable
//! Scan over its working table (PostgreSQL's `nodeRecursiveunion.c` and
//! `nodeWorktablescan.c`).
//!
//! The Recursive Union returns the non-recursive term's rows, keeping them
//! as the working table; then, while the working table is not empty, it
//! builds the recursive term's operators afresh (heapdb never rescans a
//! node), handing them the working table through the statement's
//! [`ExecContext`], returns their rows and keeps those as the next working
//! table. With UNION a row equal to one already returned is dropped and
//! does not enter the working table (the set of rows returned is kept in
//! memory, as PostgreSQL's hash table is); with UNION ALL every row goes
//! on.
//!
//! Invariants: rows stream out as each iteration makes them (a `LIMIT`
//! above stops an endless recursion); the working table being written holds
//! at most `work_mem` in memory, the rest in a temporary file; the
//! statement's cancel flag is checked every batch, so an endless recursion
//! ends at `statement_timeout` or Ctrl-C (57014). A working table is handed
//! over when the recursive term's operators are built: its WorkTable Scan
//! takes it then (a recursive term refers to its CTE exactly once).

use std::collections::VecDeque;

use super::keyset::KeySet;
use super::spill::{BlockReader, SpillFile};
use super::vector::{Batch, Vector};
use super::{build_with, ExecContext, Instrumentation, Operator};
use crate::error::{Error, Result};
use crate::nodes::Plan;

/// A working table: the rows of one iteration, the first `work_mem` of
/// them in memory, the rest in a temporary file.
#[derive(Debug, Default)]
pub struct WorkTable {
    batches: VecDeque<Batch>,
    bytes: usize,
    file: Option<SpillFile>,
    scratch: Vec<u8>,
}

impl WorkTable {
    /// Adds `b`, writing it to the temporary file once memory is full.
    fn push(&mut self, b: Batch, ctx: &ExecContext) -> Result<()> {
        let size = super::sort::batch_bytes(&b);
        if self.file.is_none() && self.bytes + size <= ctx.work_mem.max(64 * 1024) {
            self.bytes += size;
            self.batches.push_back(b);
            return Ok(());
        }
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(SpillFile::create(ctx)?),
        };
        file.write_batch(&b, &mut self.scratch)
    }

    fn is_empty(&self) -> bool {
        self.batches.is_empty() && self.file.is_none()
    }
}

/// The Recursive Union's operator.
pub struct RecursiveUnionOp<'a> {
    /// The term running now: the non-recursive term, then each iteration's
    /// recursive term.
    current: Box<dyn Operator + 'a>,
    /// The recursive term's plan, built once per iteration.
    recursive: &'a Plan,
    /// The recursive term's first node number (EXPLAIN ANALYZE adds every
    /// iteration's figures to the same nodes).
    recursive_id: usize,
    /// The working table's number.
    worktable: usize,
    /// The rows this iteration has returned: the next working table.
    next: WorkTable,
    /// UNION: every row returned so far.
    seen: Option<KeySet>,
    ctx: &'a ExecContext,
    instr: Option<&'a Instrumentation>,
}

impl<'a> RecursiveUnionOp<'a> {
    /// Over the running non-recursive term; the recursive term's nodes
    /// are numbered from `recursive_id`.
    pub fn new(
        nonrecursive: Box<dyn Operator + 'a>,
        recursive: &'a Plan,
        recursive_id: usize,
        worktable: usize,
        distinct: bool,
        ctx: &'a ExecContext,
        instr: Option<&'a Instrumentation>,
    ) -> RecursiveUnionOp<'a> {
        RecursiveUnionOp {
            current: nonrecursive,
            recursive,
            recursive_id,
            worktable,
            next: WorkTable::default(),
            seen: distinct.then(|| KeySet::new(&recursive.types())),
            ctx,
            instr,
        }
    }

    /// The rows of `b` not returned before (UNION), remembered.
    fn new_rows(&mut self, b: Batch) -> Batch {
        let Some(seen) = &mut self.seen else {
            return b;
        };
        let cols: Vec<&Vector> = b.columns.iter().collect();
        let keep: Vec<bool> = (0..b.len).map(|i| seen.insert(&cols, i).1).collect();
        if keep.iter().all(|&k| k) {
            b
        } else {
            b.filter(&keep)
        }
    }
}

impl Operator for RecursiveUnionOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            self.ctx.check_cancel()?;
            if let Some(b) = self.current.next()? {
                let b = self.new_rows(b);
                if b.len == 0 {
                    continue;
                }
                self.next.push(b.clone(), self.ctx)?;
                return Ok(Some(b));
            }
            if self.next.is_empty() {
                return Ok(None);
            }
            let work = std::mem::take(&mut self.next);
            self.ctx.put_worktable(self.worktable, work)?;
            let mut id = self.recursive_id;
            let built = build_with(self.recursive, self.ctx, self.instr, &mut id);
            // A working table its scan did not take is not left behind.
            let _ = self.ctx.take_worktable(self.worktable);
            self.current = built?;
        }
    }
}

/// The WorkTable Scan's operator: the working table it was built with.
pub struct WorkTableScanOp<'a> {
    table: WorkTable,
    reader: Option<BlockReader>,
    ctx: &'a ExecContext,
}

impl<'a> WorkTableScanOp<'a> {
    /// Takes the working table numbered `worktable` from `ctx`.
    pub fn new(worktable: usize, ctx: &'a ExecContext) -> Result<WorkTableScanOp<'a>> {
        let table = ctx.take_worktable(worktable).ok_or_else(|| {
            Error::internal(format!(
                "working table {worktable} is not there for its scan"
            ))
        })?;
        Ok(WorkTableScanOp {
            table,
            reader: None,
            ctx,
        })
    }
}

impl Operator for WorkTableScanOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        self.ctx.check_cancel()?;
        if let Some(b) = self.table.batches.pop_front() {
            return Ok(Some(b));
        }
        if self.reader.is_none() {
            match &mut self.table.file {
                Some(f) => self.reader = Some(f.reader()?),
                None => return Ok(None),
            }
        }
        match &mut self.reader {
            Some(r) => r.next_block(),
            None => Ok(None),
        }
    }
}
