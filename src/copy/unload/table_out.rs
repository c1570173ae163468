//! COPY TO of a table (`COPY t [(cols)] TO ...`), straight from the heap
//! pages: no executor, no `Value` per column per row.
//!
//! Each page's visible tuples are deformed in place (slices into the page,
//! under its shared content lock, as the scan hands them out) and each
//! attribute is formatted from its stored bytes into the output buffer:
//! integers by their digits, text, varchar and char(n) as they are stored
//! (escaped for the format), other types through their output function.
//! The output is the same bytes the query path (`unload`) writes. In text
//! format, a tuple without NULLs whose output columns are integers and
//! strings, in table order, takes `text_row`'s writer instead (one walk,
//! straight into the buffer's spare capacity).
//!
//! Pipelining: two scoped threads format the table in chunks of
//! `PARALLEL_CHUNK` blocks taken from one shared counter (the parallel
//! scan's [`ParallelBlocks`]), each chunk into its own buffer; the calling
//! thread writes the buffers in chunk order (block order, so the output is
//! the serial scan's) and hands them back. At most `IN_FLIGHT` buffers
//! exist, and a formatter takes one before it takes its next chunk (never
//! while holding a page lock), so the formatters run at most that far
//! ahead of the writer. The writer stays on the calling thread (the
//! client's stream need not be `Send`). An error on either side stops
//! both: a formatter's error travels down the channel; when the writer
//! fails it closes the buffer pool, and formatters waiting for a buffer
//! stop. The scan's hold on the relation's size keeps VACUUM from
//! truncating it meanwhile, so every chunk taken is formatted whole.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};

use super::text_row::{varlena_at, Col, TextRow, DIGIT_PAIRS};
use super::*;
use crate::access::heap::scan::{ParallelBlocks, PARALLEL_CHUNK};
use crate::access::heap::tuple::TupleDesc;
use crate::access::heap::HeapRelation;
use crate::catalog::TableDef;
use crate::copy::CopyContext;
use crate::storage::page::{self, OffsetNumber};
use crate::storage::BlockNumber;
use crate::txn::Snapshot;

/// Threads formatting chunks of blocks.
const FORMATTERS: usize = 2;
/// Output buffers in flight between the formatters and the writer.
const IN_FLIGHT: usize = 8;
/// The usual size of one chunk's output (32 pages of pgbench accounts).
const CHUNK_BYTES: usize = 256 << 10;

/// A table COPY TO writes, as its caller resolved it.
pub struct TableUnload {
    /// The table, looked up under the statement's snapshot (the context's)
    /// and locked (ACCESS SHARE).
    pub table: Arc<TableDef>,
    /// Its heap.
    pub rel: Arc<HeapRelation>,
    /// The output columns (indexes into the table's columns), in order.
    pub cols: Vec<usize>,
}

/// How an output column's stored bytes become text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `int2`: 2 little-endian bytes, printed as digits.
    Int2,
    /// `int4`: 4 little-endian bytes.
    Int4,
    /// `int8`: 8 little-endian bytes.
    Int8,
    /// text, varchar, char(n): the stored UTF-8 bytes are the output form.
    Text,
    /// Anything else: decoded and printed by the type's output function.
    Other,
}

/// Formats visible tuples of heap pages as COPY rows.
#[derive(Clone)]
struct Formatter<'a> {
    /// The COPY's options (format, delimiter, NULL string).
    opts: &'a CopyOptions,
    /// The table's storage description.
    desc: TupleDesc,
    /// The table's columns (for the types of `Kind::Other`).
    table: &'a TableDef,
    /// Output columns: indexes into the table's columns.
    cols: &'a [usize],
    /// Per output column, how to format it.
    kinds: Vec<Kind>,
    /// Per output column, CSV FORCE_QUOTE.
    force: Vec<bool>,
    /// Integers need no escaping or quoting (see [`plain_ints`]).
    plain_ints: bool,
    /// Only one output column (CSV quotes a lone `\.`).
    single: bool,
    /// Attributes to deform: one past the last output column.
    upto: usize,
    /// The output columns are the table's, in order ([`Formatter::row_in_order`]).
    in_order: bool,
    /// Text format, output columns in table order, integers and strings
    /// only: the fast row writer.
    fast: Option<TextRow>,
    /// One value's text form (reused).
    text: String,
}

impl Formatter<'_> {
    /// Appends the rows of the tuples `visible` of page `pg` (block
    /// `block`) to `out`; returns how many.
    fn page(
        &mut self,
        block: BlockNumber,
        pg: &[u8],
        visible: &[OffsetNumber],
        out: &mut Vec<u8>,
    ) -> Result<u64> {
        let mut slots: Vec<Option<&[u8]>> = vec![None; self.upto];
        for (i, &off) in visible.iter().enumerate() {
            let t = page::get_item(pg, off).ok_or_else(|| {
                err!(
                    DataCorrupted,
                    "visible line pointer {off} of block {block} has no tuple"
                )
            })?;
            // The tuple four ahead on its way (its page was prefetched as a
            // whole when the scan reached it, but that runs ahead of the
            // hardware's fill buffers): ~3% of COPY TO's CPU.
            if let Some(&ahead) = visible.get(i + 4) {
                if let Some(a) = page::get_item(pg, ahead) {
                    prefetch(a.as_ptr());
                }
            }
            if let Some(f) = &self.fast {
                if f.row(t, out)? {
                    continue;
                }
            } else if self.in_order && self.row_in_order(t, out)? {
                continue;
            }
            tuple::deform(t, &self.desc, self.upto, &mut slots)?;
            for (k, &j) in self.cols.iter().enumerate() {
                if k > 0 {
                    out.push(self.opts.delimiter);
                }
                match slots[j] {
                    None => out.extend_from_slice(self.opts.null.as_bytes()),
                    Some(b) => self.value(k, j, b, out),
                }
            }
            out.push(b'\n');
        }
        Ok(visible.len() as u64)
    }

    /// Appends the row of tuple `t` walking its attributes once, each
    /// formatted as soon as it is found (no slot list): the common case of
    /// every column in table order and a tuple without NULLs and with all
    /// its attributes. Returns false, having appended nothing, for any
    /// other tuple. The walk is [`tuple::deform`]'s, with its checks.
    #[inline]
    fn row_in_order(&mut self, t: &[u8], out: &mut Vec<u8>) -> Result<bool> {
        let n = self.cols.len();
        if tuple::infomask(t) & tuple::HEAP_HASNULL != 0 || tuple::natts(t) < n {
            return Ok(false);
        }
        let corrupt = || {
            err!(
                DataCorrupted,
                "heap tuple is corrupted: attribute data past its end"
            )
        };
        let data = t.get(tuple::hoff(t)..).ok_or_else(corrupt)?;
        let mut off = 0usize;
        for k in 0..n {
            if k > 0 {
                out.push(self.opts.delimiter);
            }
            let a = self.desc.attrs()[k];
            let b = if a.len >= 0 {
                let align = a.align as usize;
                let start = (off + align - 1) & !(align - 1);
                off = start + a.len as usize;
                data.get(start..off).ok_or_else(corrupt)?
            } else {
                varlena_at(data, &mut off, a.align as usize).ok_or_else(corrupt)?
            };
            self.value(k, k, b, out);
        }
        out.push(b'\n');
        Ok(true)
    }

    /// Appends output column `k` (table column `j`) from its stored bytes.
    #[inline]
    fn value(&mut self, k: usize, j: usize, b: &[u8], out: &mut Vec<u8>) {
        let int = match (self.kinds[k], b.len()) {
            (Kind::Int2, 2) => Some(i64::from(i16::from_le_bytes([b[0], b[1]]))),
            (Kind::Int4, 4) => Some(i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))),
            (Kind::Int8, 8) => Some(i64::from_le_bytes(b.try_into().expect("8 bytes"))),
            _ => None,
        };
        if let Some(x) = int {
            if self.plain_ints && !self.force[k] {
                push_int(x, out);
            } else {
                let mut scratch = [0; 20];
                let digits = int_digits(x, &mut scratch).as_bytes();
                write_field(self.opts, digits, self.force[k], self.single, out);
            }
            return;
        }
        // Stored text is the UTF-8 that was checked on the way in: it goes
        // out as it is, escaped only if it holds a byte that needs it.
        if self.kinds[k] == Kind::Text {
            write_field(self.opts, b, self.force[k], self.single, out);
            return;
        }
        let v = Value::decode(&self.table.columns[j].ty, b);
        self.text.clear();
        format_value(&v, &mut self.text);
        write_field(
            self.opts,
            self.text.as_bytes(),
            self.force[k],
            self.single,
            out,
        );
    }
}

/// Appends the decimal digits of `x` (what `int_digits` gives), two at a
/// time.
#[inline]
fn push_int(x: i64, out: &mut Vec<u8>) {
    let mut buf = [0u8; 20];
    let mut n = x.unsigned_abs();
    let mut i = buf.len();
    while n >= 100 {
        let d = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    }
    if n >= 10 {
        let d = n as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGIT_PAIRS[d..d + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + n as u8;
    }
    if x < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[i..]);
}

/// One chunk's output: its number (its first block / `PARALLEL_CHUNK`),
/// the formatted rows and how many; or the error that stopped a formatter.
type Chunk = Result<(u64, Vec<u8>, u64)>;

/// Writes the rows of table `src` visible to the context's snapshot to
/// `out`; returns the row count.
pub fn table_to(
    ctx: &mut CopyContext<'_>,
    src: &TableUnload,
    opts: &CopyOptions,
    out: &mut dyn Write,
) -> Result<u64> {
    let table = &*src.table;
    let names: Vec<&str> = src
        .cols
        .iter()
        .map(|&j| table.columns[j].name.as_str())
        .collect();
    let kinds: Vec<Kind> = src
        .cols
        .iter()
        .map(|&j| match table.columns[j].ty {
            DataType::Int2 => Kind::Int2,
            DataType::Int4 => Kind::Int4,
            DataType::Int8 => Kind::Int8,
            DataType::Text | DataType::Varchar(_) | DataType::Char(_) => Kind::Text,
            _ => Kind::Other,
        })
        .collect();
    let desc = tuple_desc(table)?;
    let in_order =
        src.cols.len() == table.columns.len() && src.cols.iter().enumerate().all(|(k, &j)| k == j);
    // The fast row writer: text format, output columns in table order
    // (a subset), integers and strings only.
    let ascending = src.cols.windows(2).all(|w| w[0] < w[1]);
    let fast_cols: Option<Vec<(usize, Col)>> = src
        .cols
        .iter()
        .zip(&kinds)
        .map(|(&j, k)| match k {
            Kind::Int2 => Some((j, Col::Int2)),
            Kind::Int4 => Some((j, Col::Int4)),
            Kind::Int8 => Some((j, Col::Int8)),
            Kind::Text => Some((j, Col::Text)),
            Kind::Other => None,
        })
        .collect();
    let fast = fast_cols
        .filter(|_| ascending && opts.format == Format::Text && plain_ints(opts))
        .and_then(|c| TextRow::new(&desc, &c, opts.delimiter));
    let fmt = Formatter {
        opts,
        desc,
        table,
        cols: &src.cols,
        kinds,
        force: force_flags(opts, &names)?,
        plain_ints: plain_ints(opts),
        single: names.len() == 1,
        upto: src.cols.iter().max().map_or(0, |&j| j + 1),
        in_order,
        fast,
        text: String::new(),
    };
    let write = |out: &mut dyn Write, b: &[u8]| out.write_all(b).map_err(|e| write_error(&e));
    if opts.header {
        let mut head = Vec::new();
        write_header(opts, &names, &mut head);
        write(out, &head)?;
    }
    let (rel, cancel, snap) = (&*src.rel, ctx.cancel, ctx.snapshot);
    let blocks = ParallelBlocks::new(rel.nblocks()?, FORMATTERS).with_ring_sizes(ctx.ring_sizes);
    let pool = Buffers::new(IN_FLIGHT);
    let styles = &crate::types::ThreadStyles::current();
    std::thread::scope(|s| {
        let (full_tx, full_rx) = mpsc::channel::<Chunk>();
        for _ in 0..FORMATTERS {
            let (full_tx, mut fmt) = (full_tx.clone(), fmt.clone());
            let (blocks, pool) = (&blocks, &pool);
            s.spawn(move || {
                styles.apply();
                if let Err(e) = format_chunks(rel, snap, blocks, pool, cancel, &mut fmt, &full_tx) {
                    let _ = full_tx.send(Err(e));
                }
            });
        }
        drop(full_tx);
        // Chunks come in any order; they are written in block order.
        let mut pending = std::collections::BTreeMap::new();
        let (mut next, mut rows) = (0u64, 0u64);
        let mut written = || -> Result<()> {
            for chunk in full_rx.iter() {
                let (index, buf, n) = chunk?;
                pending.insert(index, (buf, n));
                while let Some((mut buf, n)) = pending.remove(&next) {
                    write(out, &buf)?;
                    rows += n;
                    next += 1;
                    ctx.report(CopyProgress {
                        rows,
                        ..CopyProgress::default()
                    });
                    buf.clear();
                    pool.give(buf);
                }
            }
            Ok(())
        };
        let res = written();
        // A failed write (or scan) stops the formatters waiting for a
        // buffer; their next chunk is not taken.
        pool.close();
        res?;
        debug_assert!(pending.is_empty(), "every chunk written");
        Ok(rows)
    })
}

/// One formatter thread: takes chunks of blocks from `blocks`, formats the
/// visible tuples of each chunk into a buffer of `pool` and sends it with
/// the chunk's number. Returns when the blocks run out or the pool closes.
fn format_chunks(
    rel: &HeapRelation,
    snap: &Snapshot,
    blocks: &ParallelBlocks,
    pool: &Buffers,
    cancel: &std::sync::atomic::AtomicBool,
    fmt: &mut Formatter<'_>,
    full: &mpsc::Sender<Chunk>,
) -> Result<()> {
    let mut scan = rel.scan_shared(snap, blocks)?;
    let nblocks = blocks.nblocks();
    // The buffer of the chunk being formatted, its number and row count.
    let mut cur: Option<(u64, Vec<u8>, u64)> = None;
    loop {
        // A buffer is taken before the scan takes its next chunk, never
        // while a page is locked: a formatter that waits holds no chunk.
        let mut buf = match cur.take() {
            Some(c) => c,
            None => {
                if cancel.load(Ordering::Relaxed) {
                    return Err(err!(
                        QueryCanceled,
                        "canceling statement due to user request"
                    ));
                }
                match pool.take() {
                    Some(b) => (u64::MAX, b, 0),
                    None => return Ok(()),
                }
            }
        };
        let page = scan.next_page(|block, pg, visible| {
            buf.0 = u64::from(block / PARALLEL_CHUNK);
            fmt.page(block, pg, visible, &mut buf.1).map(|n| (block, n))
        })?;
        let Some(r) = page else {
            // The scan is over: the buffer taken for a chunk it did not
            // get goes back.
            pool.give(buf.1);
            return Ok(());
        };
        let (block, n) = r?;
        buf.2 += n;
        let chunk_end = (u64::from(block / PARALLEL_CHUNK) + 1) * u64::from(PARALLEL_CHUNK);
        if u64::from(block) + 1 >= chunk_end.min(u64::from(nblocks)) {
            if full.send(Ok(buf)).is_err() {
                return Ok(());
            }
        } else {
            cur = Some(buf);
        }
    }
}

/// The output buffers shared by the formatters and the writer: at most
/// `n` exist, so formatters can run only that far ahead of the writer.
struct Buffers {
    free: Mutex<(Vec<Vec<u8>>, bool)>,
    ready: Condvar,
}

impl Buffers {
    fn new(n: usize) -> Buffers {
        let bufs = (0..n).map(|_| Vec::with_capacity(CHUNK_BYTES)).collect();
        Buffers {
            free: Mutex::new((bufs, false)),
            ready: Condvar::new(),
        }
    }

    /// A free buffer (waiting for one), or `None` once closed.
    fn take(&self) -> Option<Vec<u8>> {
        let mut g = self.free.lock().expect("COPY buffer pool poisoned");
        loop {
            if g.1 {
                return None;
            }
            if let Some(b) = g.0.pop() {
                return Some(b);
            }
            g = self.ready.wait(g).expect("COPY buffer pool poisoned");
        }
    }

    fn give(&self, b: Vec<u8>) {
        self.free
            .lock()
            .expect("COPY buffer pool poisoned")
            .0
            .push(b);
        self.ready.notify_one();
    }

    fn close(&self) {
        self.free.lock().expect("COPY buffer pool poisoned").1 = true;
        self.ready.notify_all();
    }
}

/// Asks for the cache line at `p` (a hint; reads nothing).
#[inline]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and cannot fault.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p as *const i8, std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_print_as_int_digits_does() {
        for x in [
            0i64,
            1,
            -1,
            9,
            10,
            99,
            100,
            101,
            -100,
            12345,
            i64::MAX,
            i64::MIN,
            1 << 40,
        ]
        .into_iter()
        .chain((-2000..2000).map(|i| i * 7919))
        {
            let mut out = Vec::new();
            push_int(x, &mut out);
            assert_eq!(std::str::from_utf8(&out).unwrap(), x.to_string());
        }
    }
}
