//! Reading a script ahead on a second thread: splitting the next
//! statements (and reading single-row INSERTs with the grammar's scan)
//! while the session executes the current one.
//!
//! A piped script of 100,000 INSERTs spends about a third of its
//! instructions before the engine sees a statement: reading and splitting
//! the input, and scanning each INSERT's literals. None of that depends on
//! what the statements do, so [`BackgroundReader`] runs a [`ScriptReader`] on its
//! own thread and hands the items over in order; the machine has two cores.
//!
//! What must not run ahead, and how it is kept from doing so:
//! - the query buffer (`\g`, `\p`, `\r`, `\watch`) and COPY data lines
//!   (`COPY ... FROM STDIN`, `\copy ... from stdin`) are read by the item
//!   that uses them: after a meta-command line, and after any statement
//!   whose text contains `copy` or refers to a variable (whose value could
//!   make it a COPY), the reader thread *pauses* (a sync item)
//!   until the main thread has handled that item, and the main thread uses
//!   the reader ([`BackgroundReader::lines`]) only meanwhile, so it finds the
//!   splitter and the input exactly where the old, one-thread loop left
//!   them;
//! - variables (`\set`, `:NAME`) are substituted by the main thread when
//!   the statement runs; only statements that refer to no variable
//!   ([`Item::Sql`]'s `vars`) are scanned ahead, so the scan is of the text
//!   that runs;
//! - output is flushed before the shell could wait for input (a client may
//!   wait for a statement's output before it writes more): the reader
//!   thread says when its next read may block, and the main thread flushes
//!   when it has caught up with that point, as the one-thread loop does;
//! - errors (invalid UTF-8) and the end of input come in order, with the
//!   line number reached; so does a panic of the reader thread (a bug), as
//!   an error item after the items read before it, so that the main thread
//!   reports it and stops instead of waiting forever for an item that no
//!   thread will send.
//!
//! Echo of all input (`-a`) and `-c` strings read on the main thread as
//! before ([`super::script`]).
//!
//! The reader runs at most [`AHEAD`] items ahead, then waits for the main
//! thread to take them.
//!
//! Locking: `inbox` (items, flags) and `reader` (the [`ScriptReader`]) are
//! separate mutexes, never held together by the reader thread, which holds
//! `reader` while it reads and splits and takes `inbox` only to hand an item
//! over. When it is paused it holds neither; the main thread takes `reader`
//! only then.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, TryLockError};

use heapdb_grammar::{scan_single_insert, ScannedInsert, ScannedLiteral};

use super::input::{Item, ScriptReader};

/// What the main thread gets next.
pub enum Next {
    /// An item as [`ScriptReader::next_item`] gives it.
    Item(Item),
    /// A single-row INSERT that refers to no variable, read ahead with the
    /// grammar's scan: its text, end line, the scan and its literals.
    Insert {
        /// The statement text.
        text: String,
        /// 1-based line on which it ended.
        line: u64,
        /// Where the scan found the table name.
        scan: ScannedInsert,
        /// Its literals (give the vector back with [`BackgroundReader::recycle`]).
        lits: Vec<ScannedLiteral>,
    },
    /// Input could not be read (invalid UTF-8): the error and the line
    /// number reached.
    Failed(io::Error, u64),
    /// The end of input.
    End,
}

/// One entry of the hand-over queue.
enum Entry {
    /// An item the reader goes on past.
    Go(Next),
    /// An item after which the reader waits to be resumed.
    Sync(Next),
}

/// The hand-over state.
#[derive(Default)]
struct Inbox {
    /// Items read, in order.
    queue: VecDeque<Entry>,
    /// The reader's next read may block: output should be flushed once the
    /// queue is drained.
    idle: bool,
    /// The reader thread has stopped (end of input, error, or asked to).
    finished: bool,
    /// The reader waits to be resumed after a sync item.
    paused: bool,
    /// The main thread asked the reader to stop.
    stop: bool,
    /// The main thread waits for items (so the reader must signal).
    main_waiting: bool,
    /// The reader waits for the main thread to take the queue (it holds
    /// [`AHEAD`] items).
    reader_full: bool,
    /// Literal vectors handed back by the main thread, for reuse.
    spare: Vec<Vec<ScannedLiteral>>,
}

/// How many items the reader runs ahead at most. Unbounded, it split
/// half of a 22 MB script into memory ahead of the session (the reader is
/// twice as fast), and the page faults of that memory cost more than the
/// whole second thread saved.
const AHEAD: usize = 512;

/// State shared by the two threads.
struct Shared<R: Read> {
    /// The script reader (see the module doc for who holds it when).
    reader: Mutex<ScriptReader<R>>,
    /// The queue and flags.
    inbox: Mutex<Inbox>,
    /// Signalled when `inbox` changes in a way the other side waits for.
    changed: Condvar,
}

impl<R: Read> Shared<R> {
    fn inbox(&self) -> MutexGuard<'_, Inbox> {
        self.inbox.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A [`ScriptReader`] running ahead on its own thread.
pub struct BackgroundReader<R: Read + Send + 'static> {
    shared: Arc<Shared<R>>,
    /// Items taken from the inbox, not yet handed out.
    local: VecDeque<Entry>,
    /// The last item handed out was a sync item: resume the reader before
    /// taking the next one.
    resume_due: bool,
}

/// What [`BackgroundReader::try_next`] found.
pub enum Poll {
    /// The next thing in the script.
    Ready(Next),
    /// Nothing yet, and the reader's next read may block: flush output,
    /// then call [`BackgroundReader::next_blocking`].
    WouldBlock,
}

impl<R: Read + Send + 'static> BackgroundReader<R> {
    /// Starts reading `reader` on a new thread.
    pub fn start(reader: ScriptReader<R>) -> io::Result<BackgroundReader<R>> {
        let shared = Arc::new(Shared {
            reader: Mutex::new(reader),
            inbox: Mutex::new(Inbox::default()),
            changed: Condvar::new(),
        });
        let s = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("heapdb-read-ahead".into())
            .spawn(move || run_reader(&s))?;
        Ok(BackgroundReader {
            shared,
            local: VecDeque::new(),
            resume_due: false,
        })
    }

    /// The next item without waiting for input that may not come: when the
    /// reader has caught up with the input, [`Poll::WouldBlock`].
    pub fn try_next(&mut self) -> Poll {
        self.next(false)
    }

    /// The next item, waiting for input as long as it takes.
    pub fn next_blocking(&mut self) -> Next {
        match self.next(true) {
            Poll::Ready(n) => n,
            Poll::WouldBlock => unreachable!("a blocking wait returns an item"),
        }
    }

    fn next(&mut self, block: bool) -> Poll {
        if std::mem::take(&mut self.resume_due) {
            let mut inbox = self.shared.inbox();
            inbox.paused = false;
            drop(inbox);
            self.shared.changed.notify_all();
        }
        loop {
            if let Some(entry) = self.local.pop_front() {
                return match entry {
                    Entry::Go(n) => Poll::Ready(n),
                    Entry::Sync(n) => {
                        self.resume_due = true;
                        Poll::Ready(n)
                    }
                };
            }
            let mut inbox = self.shared.inbox();
            loop {
                if !inbox.queue.is_empty() {
                    std::mem::swap(&mut self.local, &mut inbox.queue);
                    if inbox.reader_full {
                        self.shared.changed.notify_all();
                    }
                    break;
                }
                if inbox.finished {
                    return Poll::Ready(Next::End);
                }
                if inbox.idle && !block {
                    return Poll::WouldBlock;
                }
                inbox.main_waiting = true;
                inbox = self
                    .shared
                    .changed
                    .wait(inbox)
                    .unwrap_or_else(|p| p.into_inner());
                inbox.main_waiting = false;
            }
        }
    }

    /// The reader itself, for the item just handed out when it was a sync
    /// item (a meta-command's query buffer, COPY data lines): the reader
    /// thread is paused until the next [`BackgroundReader::try_next`].
    pub fn lines(&self) -> MutexGuard<'_, ScriptReader<R>> {
        debug_assert!(self.resume_due, "the reader runs ahead");
        self.shared.reader.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the item just handed out was a sync item (the reader waits
    /// for it, and [`BackgroundReader::lines`] may be used).
    pub fn paused(&self) -> bool {
        self.resume_due
    }

    /// Gives a literal vector back for the reader to reuse.
    pub fn recycle(&self, lits: Vec<ScannedLiteral>) {
        self.shared.inbox().spare.push(lits);
    }
}

impl<R: Read + Send + 'static> Drop for BackgroundReader<R> {
    /// Asks the reader thread to stop at its next hand-over (it is not
    /// joined: it may be blocked reading input that never comes).
    fn drop(&mut self) {
        let mut inbox = self.shared.inbox();
        inbox.stop = true;
        inbox.paused = false;
        drop(inbox);
        self.shared.changed.notify_all();
    }
}

/// Whether the main thread may use the reader for `item`, so that the
/// reader must wait for it: meta-commands (the query buffer, `\copy`),
/// statements that may be a `COPY ... FROM STDIN`, echoed lines.
fn is_sync(item: &Item) -> bool {
    match item {
        // Substituted variables could turn it into a COPY.
        // Setting standard_conforming_strings changes how the next
        // statements split.
        Item::Sql { text, vars, .. } => *vars || contains_copy(text) || sets_quoting(text),
        Item::Meta { .. } | Item::Echo(_) => true,
        Item::Invalid { .. } => false,
    }
}

/// Whether `text` contains the word `copy` anywhere, in any case (a
/// superset of the statements that read COPY data).
fn contains_copy(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memchr2_iter(b'c', b'C', b).any(|i| {
        b.get(i..i + 4)
            .is_some_and(|w| w.eq_ignore_ascii_case(b"copy"))
    })
}

/// Whether `text` mentions `standard_conforming_strings` (a superset
/// of the statements that change it).
fn sets_quoting(text: &str) -> bool {
    const NAME: &[u8] = b"standard_conforming_strings";
    let b = text.as_bytes();
    memchr::memchr2_iter(b's', b'S', b).any(|i| {
        b.get(i..i + NAME.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(NAME))
    })
}

/// The reader thread's body: [`read_loop`], and should it panic, an error
/// item for the main thread, which would otherwise wait for ever.
fn run_reader<R: Read>(shared: &Shared<R>) {
    // Unwind safety: after a panic only the inbox is touched (its mutex
    // poisoning is ignored on purpose: a queue push is never left half
    // done) and the reader's line count is read.
    let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| read_loop(shared))) else {
        return;
    };
    let what = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    // The reader's mutex is free unless the main thread holds it, which it
    // does only while the reader is paused (not where it could panic).
    let line = match shared.reader.try_lock() {
        Ok(r) => r.lineno(),
        Err(TryLockError::Poisoned(p)) => p.into_inner().lineno(),
        Err(TryLockError::WouldBlock) => 0,
    };
    let mut inbox = shared.inbox();
    inbox.queue.push_back(Entry::Go(Next::Failed(
        io::Error::other(format!(
            "internal error: the script reader thread panicked: {what}"
        )),
        line,
    )));
    inbox.finished = true;
    inbox.idle = false;
    inbox.paused = false;
    drop(inbox);
    shared.changed.notify_all();
}

/// The reader thread: reads items and hands them over until the end of
/// input, an error, or a stop.
fn read_loop<R: Read>(shared: &Shared<R>) {
    let mut lits = Vec::new();
    loop {
        let mut reader = shared.reader.lock().unwrap_or_else(|p| p.into_inner());
        if reader.may_block() {
            let mut inbox = shared.inbox();
            if inbox.stop {
                inbox.finished = true;
                drop(inbox);
                shared.changed.notify_all();
                return;
            }
            inbox.idle = true;
            let wake = inbox.main_waiting;
            drop(inbox);
            if wake {
                shared.changed.notify_all();
            }
        }
        let entry = match reader.next_item() {
            Ok(None) => None,
            Ok(Some(Item::Sql {
                text,
                line,
                vars: false,
            })) if !contains_copy(&text) => {
                Some(Entry::Go(match scan_single_insert(&text, &mut lits) {
                    Some(scan) => Next::Insert {
                        text,
                        line,
                        scan,
                        lits: std::mem::take(&mut lits),
                    },
                    None => Next::Item(Item::Sql {
                        text,
                        line,
                        vars: false,
                    }),
                }))
            }
            Ok(Some(item)) if is_sync(&item) => Some(Entry::Sync(Next::Item(item))),
            Ok(Some(item)) => Some(Entry::Go(Next::Item(item))),
            Err(e) => Some(Entry::Go(Next::Failed(e, reader.lineno()))),
        };
        drop(reader);
        let mut inbox = shared.inbox();
        if lits.capacity() == 0 {
            // A vector the main thread is done with, else one sized for a
            // typical row (not grown literal by literal).
            lits = inbox.spare.pop().unwrap_or_else(|| Vec::with_capacity(32));
        }
        let (sync, last) = match &entry {
            None | Some(Entry::Go(Next::Failed(..))) => (false, true),
            Some(Entry::Sync(_)) => (true, false),
            Some(Entry::Go(_)) => (false, false),
        };
        if let Some(e) = entry {
            inbox.queue.push_back(e);
        }
        inbox.idle = false;
        if last || inbox.stop {
            inbox.finished = true;
            drop(inbox);
            shared.changed.notify_all();
            return;
        }
        if sync {
            inbox.paused = true;
            shared.changed.notify_all();
            while inbox.paused && !inbox.stop {
                inbox = shared
                    .changed
                    .wait(inbox)
                    .unwrap_or_else(|p| p.into_inner());
            }
            continue;
        }
        let wake = inbox.main_waiting;
        if inbox.queue.len() >= AHEAD {
            if wake {
                shared.changed.notify_all();
            }
            inbox.reader_full = true;
            while inbox.queue.len() >= AHEAD && !inbox.stop {
                inbox = shared
                    .changed
                    .wait(inbox)
                    .unwrap_or_else(|p| p.into_inner());
            }
            inbox.reader_full = false;
            continue;
        }
        drop(inbox);
        if wake {
            shared.changed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(script: String) -> BackgroundReader<io::Cursor<Vec<u8>>> {
        BackgroundReader::start(ScriptReader::new(io::Cursor::new(script.into_bytes()))).unwrap()
    }

    fn next(a: &mut BackgroundReader<io::Cursor<Vec<u8>>>) -> Next {
        match a.try_next() {
            Poll::Ready(n) => n,
            Poll::WouldBlock => a.next_blocking(),
        }
    }

    #[test]
    fn items_come_in_order_scanned_or_not_and_sync_items_pause_the_reader() {
        let script = "insert into t values (1, 'a');\n\
            select :x;\n\
            insert into t values (2, 'b'); \\echo hi\n\
            select 1 \\g\n\
            copy t from stdin;\n\
            1\tx\n\
            \\.\n\
            insert into t values (3, 'c');\n";
        let mut a = start(script.to_string());
        assert!(matches!(next(&mut a), Next::Insert { line: 1, .. }));
        // A statement with a variable pauses the reader right after it.
        assert!(matches!(
            next(&mut a),
            Next::Item(Item::Sql {
                line: 2,
                vars: true,
                ..
            })
        ));
        assert!(a.paused());
        assert_eq!(a.lines().lineno(), 2);
        assert!(matches!(next(&mut a), Next::Insert { line: 3, .. }));
        assert!(matches!(
            next(&mut a),
            Next::Item(Item::Meta { line: 3, .. })
        ));
        assert!(matches!(
            next(&mut a),
            Next::Item(Item::Meta { line: 4, .. })
        ));
        // The query buffer is as the meta-command left it.
        assert_eq!(a.lines().splitter().take_buffer(), "select 1 ");
        assert!(matches!(
            next(&mut a),
            Next::Item(Item::Sql { line: 5, .. })
        ));
        // COPY data lines are left for the COPY.
        {
            let mut r = a.lines();
            assert_eq!(r.copy_data_line().unwrap(), Some(&b"1\tx"[..]));
            assert_eq!(r.copy_data_line().unwrap(), None);
        }
        assert!(matches!(next(&mut a), Next::Insert { line: 8, .. }));
        assert!(matches!(next(&mut a), Next::End));
    }

    #[test]
    fn the_reader_runs_at_most_a_bounded_number_of_items_ahead() {
        let script = "insert into t values (1, 'x');\n".repeat(AHEAD * 4);
        let mut a = start(script);
        let mut seen = 0;
        while seen < AHEAD * 4 {
            // Wait until the reader is held back by the bound (or done).
            loop {
                let inbox = a.shared.inbox();
                assert!(inbox.queue.len() <= AHEAD);
                if inbox.reader_full || inbox.finished {
                    break;
                }
                drop(inbox);
                std::thread::yield_now();
            }
            for _ in 0..AHEAD / 2 {
                if let Next::Insert { text, lits, .. } = next(&mut a) {
                    a.recycle(lits);
                    assert_eq!(text, "insert into t values (1, 'x');");
                    seen += 1;
                }
            }
        }
        assert!(matches!(next(&mut a), Next::End));
    }

    /// Gives `text`, then panics on the next read.
    struct PanicsAfter(io::Cursor<Vec<u8>>);

    impl Read for PanicsAfter {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.read(buf)? {
                0 => panic!("reader test panic"),
                n => Ok(n),
            }
        }
    }

    #[test]
    fn a_panic_of_the_reader_thread_reaches_the_main_thread_as_an_error() {
        let input = PanicsAfter(io::Cursor::new(
            b"insert into t values (1, 'a');\nselect 2;\nselect".to_vec(),
        ));
        let mut a = BackgroundReader::start(ScriptReader::new(input)).unwrap();
        // The consumer runs on a thread of its own so that a hang fails the
        // test instead of stalling it.
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut got = Vec::new();
            loop {
                let n = match a.try_next() {
                    Poll::Ready(n) => n,
                    Poll::WouldBlock => a.next_blocking(),
                };
                got.push(match n {
                    Next::Insert { line, .. } => format!("insert {line}"),
                    Next::Item(Item::Sql { text, line, .. }) => format!("{text} {line}"),
                    Next::Item(_) => "other".to_string(),
                    Next::Failed(e, line) => format!("failed {line}: {e}"),
                    Next::End => "end".to_string(),
                });
                if got
                    .last()
                    .is_some_and(|g| g.starts_with("failed") || g == "end")
                {
                    break;
                }
            }
            tx.send(got).unwrap();
        });
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(30))
            .expect("the main thread got an item after the reader's panic");
        assert_eq!(
            got,
            [
                "insert 1",
                "select 2; 2",
                "failed 2: internal error: the script reader thread panicked: reader test panic"
            ]
        );
    }
}
