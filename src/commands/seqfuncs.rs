//! Sequence values: `nextval`, `currval`, `setval` and `lastval`, as
//! PostgreSQL's `commands/sequence.c` hands them out.
//!
//! A sequence's value lives in its own relation file: one heap page whose
//! line pointer 1 holds a frozen tuple `(last_value int8, log_cnt int8,
//! is_called bool)`. The page is changed only through a logged
//! `HeapRecord::Insert` that initialises it again with the new tuple, so
//! redo, full-page images and checkpoints treat it as any heap page.
//!
//! Values are handed out outside transactions, as PostgreSQL's are: a
//! rollback never returns one, and the value kept in memory
//! ([`SequenceStates`], shared by every session of the database) advances
//! under its mutex, so no two calls anywhere get the same value. The page
//! is written only when the values logged ahead run out: it then records
//! a value [`SEQ_LOG_VALS`] increments past the one returned (PostgreSQL's
//! `SEQ_LOG_VALS`), so after a crash the sequence resumes beyond every
//! value it may have handed out. The session flushes the log through that
//! record before its transaction ends ([`SessionSequences::take_flush`]),
//! so a value a client has seen is never handed out again.
//!
//! Invariant: the page's `last_value` is at or beyond (in the direction of
//! the increment) every value returned since the database opened.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::access::heap::record::HeapRecord;
use crate::access::heap::{tuple, HeapRelation};
use crate::catalog::SequenceDef;
use crate::err;
use crate::error::Result;
use crate::storage::{page, ForkNumber};
use crate::wal::record::Lsn;

/// How many values past the one returned a log record covers.
pub const SEQ_LOG_VALS: i64 = 32;

/// Where the tuple's columns start (a 24-byte aligned header).
const DATA: usize = 24;
/// The tuple's length: header, two int8 and a bool.
const TUPLE_LEN: usize = DATA + 17;

/// A sequence's state as `SELECT * FROM s` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeqValue {
    /// The last value handed out (or the next one, before `is_called`).
    pub last_value: i64,
    /// Values still covered by the last log record.
    pub log_cnt: i64,
    /// Whether `last_value` was handed out.
    pub is_called: bool,
}

/// The in-memory states of the sequences, by relation file; shared by the
/// sessions of one database.
#[derive(Debug, Default)]
pub struct SequenceStates {
    cells: Mutex<HashMap<u32, Arc<Mutex<Option<SeqValue>>>>>,
}

/// The tuple of `v`, frozen, at line pointer 1 of block 0.
fn form(v: SeqValue) -> Vec<u8> {
    let mut t = vec![0u8; TUPLE_LEN];
    tuple::set_xmin(&mut t, 2);
    tuple::set_ctid(&mut t, 0, 1);
    tuple::set_infomask2(&mut t, 3);
    tuple::set_infomask(&mut t, tuple::HEAP_XMIN_FROZEN | tuple::HEAP_XMAX_INVALID);
    t[tuple::T_HOFF] = DATA as u8;
    t[DATA..DATA + 8].copy_from_slice(&v.last_value.to_le_bytes());
    t[DATA + 8..DATA + 16].copy_from_slice(&v.log_cnt.to_le_bytes());
    t[DATA + 16] = v.is_called as u8;
    t
}

fn parse(p: &[u8]) -> Result<SeqValue> {
    let t = page::get_item(p, 1)
        .filter(|t| t.len() >= TUPLE_LEN)
        .ok_or_else(|| err!(DataCorrupted, "sequence page has no value tuple"))?;
    let int = |at: usize| i64::from_le_bytes(t[at..at + 8].try_into().expect("8 bytes"));
    Ok(SeqValue {
        last_value: int(DATA),
        log_cnt: int(DATA + 8),
        is_called: t[DATA + 16] != 0,
    })
}

/// Writes `v` as the page of `rel` (block 0, added when the file is
/// empty), logged without a transaction; returns the record's position.
pub fn write_page(rel: &HeapRelation, v: SeqValue) -> Result<Lsn> {
    let pool = rel.pool();
    let buf = if rel.nblocks()? == 0 {
        pool.extend(rel.rel(), ForkNumber::Main, None)?.1
    } else {
        pool.read_buffer(rel.rel(), ForkNumber::Main, 0, None)?
    };
    let mut g = buf.write();
    let rec = HeapRecord::Insert {
        offset: 1,
        init_page: true,
        clear_all_visible: false,
        tuple: form(v),
    };
    rel.log_apply(ForkNumber::Main, 0, &mut g, &rec, 0)?;
    Ok(page::lsn(&g[..]))
}

fn read_page(rel: &HeapRelation) -> Result<SeqValue> {
    let buf = rel
        .pool()
        .read_buffer(rel.rel(), ForkNumber::Main, 0, None)?;
    let g = buf.read();
    let mut v = parse(&g[..])?;
    // What the page says is what was logged: nothing more is covered.
    v.log_cnt = 0;
    Ok(v)
}

impl SequenceStates {
    fn cell(&self, relfilenode: u32) -> Arc<Mutex<Option<SeqValue>>> {
        self.cells
            .lock()
            .expect("sequence states poisoned")
            .entry(relfilenode)
            .or_default()
            .clone()
    }

    /// Runs `f` on the state of sequence `def` (read from its page the
    /// first time), under the sequence's mutex.
    fn with<T>(
        &self,
        def: &SequenceDef,
        rel: &HeapRelation,
        f: impl FnOnce(&mut SeqValue) -> Result<T>,
    ) -> Result<T> {
        let cell = self.cell(def.relfilenode);
        let mut g = cell.lock().expect("sequence state poisoned");
        if g.is_none() {
            *g = Some(read_page(rel)?);
        }
        f(g.as_mut().expect("loaded above"))
    }

    /// The state `SELECT * FROM s` shows.
    pub fn current(&self, def: &SequenceDef, rel: &HeapRelation) -> Result<SeqValue> {
        self.with(def, rel, |v| Ok(*v))
    }

    /// Sets a new sequence's (or a restarted one's) state and writes it.
    pub fn reset(&self, def: &SequenceDef, rel: &HeapRelation, v: SeqValue) -> Result<Lsn> {
        let cell = self.cell(def.relfilenode);
        let mut g = cell.lock().expect("sequence state poisoned");
        let lsn = write_page(rel, v)?;
        *g = Some(v);
        Ok(lsn)
    }

    /// `nextval`: the next value, and the log position to flush when a
    /// record was written (PostgreSQL's `nextval_internal` with a cache of
    /// one).
    pub fn nextval(&self, def: &SequenceDef, rel: &HeapRelation) -> Result<(i64, Option<Lsn>)> {
        self.with(def, rel, |s| {
            let (incby, maxv, minv) = (def.increment, def.max, def.min);
            let mut next = s.last_value;
            let mut result = next;
            let mut rescnt = 0;
            let mut fetch: i64 = 1;
            let mut log = s.log_cnt;
            if !s.is_called {
                rescnt += 1;
                fetch -= 1;
            }
            let logit = log < fetch || !s.is_called;
            if logit {
                fetch += SEQ_LOG_VALS;
                log = fetch;
            }
            let mut last = next;
            while fetch > 0 {
                let at_end = if incby > 0 {
                    next > maxv - incby
                } else {
                    next < minv - incby
                };
                if at_end {
                    if rescnt > 0 {
                        break;
                    }
                    if !def.cycle {
                        let (which, bound) = if incby > 0 {
                            ("maximum", maxv)
                        } else {
                            ("minimum", minv)
                        };
                        return Err(err!(
                            SequenceGeneratorLimitExceeded,
                            "nextval: reached {which} value of sequence \"{}\" ({bound})",
                            def.name
                        ));
                    }
                    next = if incby > 0 { minv } else { maxv };
                } else {
                    next += incby;
                }
                fetch -= 1;
                if rescnt < 1 {
                    log -= 1;
                    rescnt += 1;
                    last = next;
                    if rescnt == 1 {
                        result = next;
                    }
                }
            }
            log -= fetch;
            let mut lsn = None;
            if logit {
                lsn = Some(write_page(
                    rel,
                    SeqValue {
                        last_value: next,
                        log_cnt: 0,
                        is_called: true,
                    },
                )?);
            }
            *s = SeqValue {
                last_value: last,
                log_cnt: log,
                is_called: true,
            };
            Ok((result, lsn))
        })
    }

    /// At a clean shutdown: writes each sequence's value as it stands to
    /// its page (`open` gives the open relation of a file still in use,
    /// `None` for one dropped), so the database reopens where it stopped
    /// rather than at the value logged ahead, as PostgreSQL's shutdown
    /// checkpoint writes the sequence's buffer.
    pub fn write_back(&self, open: impl Fn(u32) -> Option<Arc<HeapRelation>>) -> Result<()> {
        let cells: Vec<_> = self
            .cells
            .lock()
            .expect("sequence states poisoned")
            .iter()
            .map(|(k, c)| (*k, c.clone()))
            .collect();
        for (relfilenode, cell) in cells {
            let g = cell.lock().expect("sequence state poisoned");
            if let (Some(v), Some(rel)) = (*g, open(relfilenode)) {
                if rel.nblocks()? > 0 {
                    write_page(rel.as_ref(), v)?;
                }
            }
        }
        Ok(())
    }

    /// `setval(s, value, is_called)`: 22003 outside the bounds.
    pub fn setval(
        &self,
        def: &SequenceDef,
        rel: &HeapRelation,
        value: i64,
        is_called: bool,
    ) -> Result<Lsn> {
        if value < def.min || value > def.max {
            return Err(err!(
                NumericValueOutOfRange,
                "setval: value {value} is out of bounds for sequence \"{}\" ({}..{})",
                def.name,
                def.min,
                def.max
            ));
        }
        self.with(def, rel, |s| {
            let v = SeqValue {
                last_value: value,
                log_cnt: 0,
                is_called,
            };
            let lsn = write_page(rel, v)?;
            *s = v;
            Ok(lsn)
        })
    }
}

/// One session's memory of its sequence calls: `currval` per sequence,
/// the sequence `lastval` reads, and the log position its transaction
/// must flush before it ends.
#[derive(Debug)]
pub struct SessionSequences {
    /// A number of this session's own, unique in the process.
    pub id: u64,
    state: Mutex<SessionState>,
    /// The session's statement runs in a READ ONLY transaction: nextval
    /// and setval refuse (set by the session before each statement).
    read_only: std::sync::atomic::AtomicBool,
}

#[derive(Debug, Default)]
struct SessionState {
    currval: HashMap<u32, i64>,
    last: Option<(u32, String)>,
    flush: Option<Lsn>,
}

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

impl Default for SessionSequences {
    fn default() -> Self {
        SessionSequences {
            id: NEXT_SESSION.fetch_add(1, Ordering::Relaxed),
            state: Mutex::new(SessionState::default()),
            read_only: Default::default(),
        }
    }
}

impl SessionSequences {
    fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().expect("session sequences poisoned")
    }

    /// Notes a value handed out by `nextval` of sequence `def`, and a log
    /// position to flush.
    /// Records whether the session's statement runs READ ONLY.
    pub fn set_read_only(&self, read_only: bool) {
        self.read_only.store(read_only, Ordering::Relaxed);
    }

    /// PostgreSQL's 25006 for `func` (nextval, setval) in a READ ONLY
    /// transaction.
    pub fn check_writable(&self, func: &str) -> crate::error::Result<()> {
        if self.read_only.load(Ordering::Relaxed) {
            return Err(crate::err!(
                ReadOnlySqlTransaction,
                "cannot execute {func}() in a read-only transaction"
            ));
        }
        Ok(())
    }

    pub fn note(&self, def: &SequenceDef, value: i64, lsn: Option<Lsn>) {
        let mut st = self.state();
        st.currval.insert(def.oid, value);
        st.last = Some((def.oid, def.name.clone()));
        if let Some(l) = lsn {
            st.flush = Some(st.flush.map_or(l, |f| f.max(l)));
        }
    }

    /// Notes a log position to flush (setval, ALTER SEQUENCE RESTART).
    pub fn note_flush(&self, lsn: Lsn) {
        let mut st = self.state();
        st.flush = Some(st.flush.map_or(lsn, |f| f.max(lsn)));
    }

    /// `currval(s)`: 55000 before the session's first `nextval` of it.
    pub fn currval(&self, def: &SequenceDef) -> Result<i64> {
        self.state().currval.get(&def.oid).copied().ok_or_else(|| {
            err!(
                ObjectNotInPrerequisiteState,
                "currval of sequence \"{}\" is not yet defined in this session",
                def.name
            )
        })
    }

    /// `setval` with `is_called` also sets `currval` (not `lastval`'s
    /// sequence), as PostgreSQL's `do_setval` does.
    pub fn set_currval(&self, def: &SequenceDef, value: i64) {
        self.state().currval.insert(def.oid, value);
    }

    /// `lastval()`: the last value `nextval` returned in this session.
    pub fn lastval(&self) -> Result<i64> {
        let st = self.state();
        st.last
            .as_ref()
            .and_then(|(oid, _)| st.currval.get(oid).copied())
            .ok_or_else(|| {
                err!(
                    ObjectNotInPrerequisiteState,
                    "lastval is not yet defined in this session"
                )
            })
    }

    /// The log position the session must flush, taken.
    pub fn take_flush(&self) -> Option<Lsn> {
        self.state().flush.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuple_round_trips_through_a_page() {
        let mut p = vec![0u8; crate::storage::BLCKSZ];
        let v = SeqValue {
            last_value: -42,
            log_cnt: 7,
            is_called: true,
        };
        let rec = HeapRecord::Insert {
            offset: 1,
            init_page: true,
            clear_all_visible: false,
            tuple: form(v),
        };
        crate::access::heap::record::apply(&rec, &mut p).unwrap();
        assert_eq!(parse(&p).unwrap(), v);
    }
}
