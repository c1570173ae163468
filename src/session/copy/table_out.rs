//! COPY TO of a table (`COPY t [(cols)] TO ...`), straight from the heap
//! pages: no executor, no `Value` per column per row.
//!
//! Each page's visible tuples are deformed in place (slices into the page,
//! under its shared content lock, as the scan hands them out) and each
//! attribute is formatted from its stored bytes into the output buffer:
//! integers by their digits, text, varchar and char(n) as they are stored
//! (escaped for the format), other types through their output function.
//! The output is the same bytes the query path (`unload`) writes.
//!
//! Pipelining: a scoped thread scans and formats into 1 MiB buffers; the
//! calling thread writes them in order and hands the emptied buffers back,
//! so formatting and the write system calls overlap. The writer stays on
//! the calling thread (the client's stream need not be `Send`). An error on
//! either side stops both: the scanner's error travels down the channel;
//! when the writer fails it drops the channel and the scanner's next send
//! fails, which ends it.

use std::io::Write;
use std::sync::mpsc;
use std::sync::Arc;

use super::unload::{force_flags, plain_ints, write_field, write_header};
use super::*;
use crate::access::heap::tuple::TupleDesc;
use crate::catalog::TableDef;
use crate::storage::page::{self, OffsetNumber};
use crate::storage::BlockNumber;
use crate::txn::Snapshot;

/// Output is handed to the writer in buffers of about this size.
const CHUNK: usize = 1 << 20;
/// Buffers in flight between the scanner and the writer.
const IN_FLIGHT: usize = 2;

/// A table COPY TO writes, checked and locked.
pub(in crate::session) struct TableUnload {
    /// The table.
    pub table: Arc<TableDef>,
    /// The output columns (indexes into the table's columns), in order.
    pub cols: Vec<usize>,
    /// The statement's snapshot (the one the table was looked up with).
    pub snap: Snapshot,
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
        for &off in visible {
            let t = page::get_item(pg, off).ok_or_else(|| {
                err!(
                    DataCorrupted,
                    "visible line pointer {off} of block {block} has no tuple"
                )
            })?;
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

/// `00` to `99`, for printing integers two digits at a time.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

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

/// One formatted buffer and the rows written up to its end, or the error
/// that stopped the scan.
type Chunk = Result<(Vec<u8>, u64)>;

impl Session {
    /// Writes the rows of table `src` to `out`; returns the row count.
    pub(super) fn copy_table_to(
        &mut self,
        src: &TableUnload,
        opts: &CopyOptions,
        out: &mut dyn Write,
        mut progress: Option<&mut dyn FnMut(&CopyProgress)>,
    ) -> Result<u64> {
        let table = &*src.table;
        let names: Vec<&str> = src
            .cols
            .iter()
            .map(|&j| table.columns[j].name.as_str())
            .collect();
        let mut fmt = Formatter {
            opts,
            desc: tuple_desc(table)?,
            table,
            cols: &src.cols,
            kinds: src
                .cols
                .iter()
                .map(|&j| match table.columns[j].ty {
                    DataType::Int2 => Kind::Int2,
                    DataType::Int4 => Kind::Int4,
                    DataType::Int8 => Kind::Int8,
                    DataType::Text | DataType::Varchar(_) | DataType::Char(_) => Kind::Text,
                    _ => Kind::Other,
                })
                .collect(),
            force: force_flags(opts, &names)?,
            plain_ints: plain_ints(opts),
            single: names.len() == 1,
            upto: src.cols.iter().max().map_or(0, |&j| j + 1),
            text: String::new(),
        };
        let write = |out: &mut dyn Write, b: &[u8]| {
            out.write_all(b)
                .map_err(|e| err!(IoError, "could not write to COPY file: {}", os_text(&e)))
        };
        if opts.header {
            let mut head = Vec::new();
            write_header(opts, &names, &mut head);
            write(out, &head)?;
        }
        let rel = self.db.relation(table.relfilenode)?;
        let cancel = self.cancel.clone();
        let snap = &src.snap;
        std::thread::scope(|s| {
            let (full_tx, full_rx) = mpsc::sync_channel::<Chunk>(IN_FLIGHT);
            let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
            s.spawn(move || {
                let mut scan_and_send = || -> Result<()> {
                    let mut scan = rel.scan(snap)?;
                    let mut buf = Vec::with_capacity(CHUNK + 64 * 1024);
                    let mut rows = 0u64;
                    loop {
                        let page = scan.next_page(|block, pg, visible| {
                            fmt.page(block, pg, visible, &mut buf)
                        })?;
                        let Some(n) = page else { break };
                        rows += n?;
                        if buf.len() >= CHUNK {
                            if cancel.load(Ordering::Relaxed) {
                                return Err(err!(
                                    QueryCanceled,
                                    "canceling statement due to user request"
                                ));
                            }
                            let next = empty_rx
                                .try_recv()
                                .unwrap_or_else(|_| Vec::with_capacity(CHUNK + 64 * 1024));
                            if full_tx
                                .send(Ok((std::mem::replace(&mut buf, next), rows)))
                                .is_err()
                            {
                                // The writer failed and reports its error.
                                return Ok(());
                            }
                        }
                    }
                    let _ = full_tx.send(Ok((buf, rows)));
                    Ok(())
                };
                if let Err(e) = scan_and_send() {
                    let _ = full_tx.send(Err(e));
                }
            });
            let mut rows = 0u64;
            for chunk in full_rx {
                let (mut buf, n) = chunk?;
                write(out, &buf)?;
                rows = n;
                if let Some(p) = progress.as_deref_mut() {
                    p(&CopyProgress {
                        rows,
                        ..CopyProgress::default()
                    });
                }
                buf.clear();
                let _ = empty_tx.send(buf);
            }
            Ok(rows)
        })
    }
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
