//! Temporary files for operators that outgrow their memory: sort runs, the
//! partitions of a spilling hash aggregation and the batches of a hash
//! join.
//!
//! Files live in the data directory's `base/pgsql_tmp`, named
//! `pgsql_tmp<pid>.<n>` as PostgreSQL names them. A [`SpillFile`] deletes
//! its file when dropped, so a statement's files are gone when its
//! operators are, whether it finished, failed or was cancelled; files left
//! by a crashed process are removed when the database opens
//! ([`clear_temp_dir`]). A file is written once, then read from the start
//! any number of times; it holds no open descriptor between the two, so a
//! deep recursion of partitions does not run out of descriptors.
//!
//! Rows are written in blocks of up to [`BATCH_SIZE`] rows, each written
//! column by column in the vectors' own layout (null mask, fixed-width
//! values as little-endian bytes, a string column as its end offsets then
//! its byte buffer; only numeric and interval values go through their
//! storage encoding one by one).
//!
//! [`Partitions`] splits a stream of batches by a hash of each row's key
//! into a fixed number of files ([`partition_of`] picks different hash
//! bits at each recursion depth, so a partition that is still too big
//! splits again), buffering up to a batch per partition.

use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use hashbrown::DefaultHashBuilder;

use super::keyset::hash_at;
use super::vector::{Batch, Data, StrVec, Vector, BATCH_SIZE};
use super::{ExecContext, Operator};
use crate::error::{Error, Result};
use crate::types::{DataType, Value};

/// The temporary-file directory of the data directory `data_dir`.
pub fn temp_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("base").join("pgsql_tmp")
}

/// Removes every file of `data_dir`'s temporary-file directory: what a
/// process that died mid-statement left (called when the database opens,
/// as PostgreSQL's `RemovePgTempFiles` at startup).
pub fn clear_temp_dir(data_dir: &Path) -> Result<()> {
    let dir = temp_dir(data_dir);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(crate::err!(
                IoError,
                "could not open directory \"{}\": {e}",
                dir.display()
            ))
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_file() {
            std::fs::remove_file(&path).map_err(|e| {
                crate::err!(IoError, "could not remove file \"{}\": {e}", path.display())
            })?;
        }
    }
    Ok(())
}

/// Numbers the temporary files of this process.
static NEXT_FILE: AtomicU64 = AtomicU64::new(0);

/// One temporary file (see the module doc): written once, then read.
#[derive(Debug)]
pub struct SpillFile {
    path: PathBuf,
    /// While writing.
    writer: Option<BufWriter<File>>,
    /// The column types of the rows it holds (from the first block).
    types: Vec<DataType>,
    /// Bytes written.
    bytes: u64,
    /// Rows written.
    rows: u64,
}

impl SpillFile {
    /// A new, empty file in the statement's temporary-file directory.
    pub fn create(ctx: &ExecContext) -> Result<SpillFile> {
        let dir = match &ctx.temp_dir {
            Some(d) => d.clone(),
            None => std::env::temp_dir(),
        };
        let n = NEXT_FILE.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!("pgsql_tmp{}.{n}", std::process::id()));
        let open = || {
            std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
        };
        let file = match open() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(&dir).and_then(|_| open())
            }
            r => r,
        }
        .map_err(|e| {
            crate::err!(
                IoError,
                "could not create temporary file \"{}\": {e}",
                path.display()
            )
        })?;
        Ok(SpillFile {
            path,
            writer: Some(BufWriter::with_capacity(32 * 1024, file)),
            types: Vec::new(),
            bytes: 0,
            rows: 0,
        })
    }

    /// Appends rows `rows` of `b` as one block.
    pub fn write_rows(&mut self, b: &Batch, rows: &[u32], scratch: &mut Vec<u8>) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        if self.rows == 0 {
            self.types = b.columns.iter().map(|c| c.ty).collect();
        }
        let w = self
            .writer
            .as_mut()
            .ok_or_else(|| Error::internal("temporary file written after it was read"))?;
        encode_block(b, rows, scratch);
        w.write_all(&(scratch.len() as u64).to_le_bytes())?;
        w.write_all(scratch)?;
        self.bytes += 8 + scratch.len() as u64;
        self.rows += rows.len() as u64;
        Ok(())
    }

    /// Appends all of `b` (in blocks of up to a batch).
    pub fn write_batch(&mut self, b: &Batch, scratch: &mut Vec<u8>) -> Result<()> {
        let all: Vec<u32> = (0..b.len as u32).collect();
        for chunk in all.chunks(BATCH_SIZE) {
            self.write_rows(b, chunk, scratch)?;
        }
        Ok(())
    }

    /// Ends the writing (flushes; closes the descriptor).
    pub fn finish(&mut self) -> Result<()> {
        if let Some(mut w) = self.writer.take() {
            w.flush()?;
        }
        Ok(())
    }

    /// Bytes written.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Rows written.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// A reader of the blocks from the start (the writing ends first).
    pub fn reader(&mut self) -> Result<BlockReader> {
        self.finish()?;
        let file = File::open(&self.path).map_err(|e| {
            crate::err!(
                IoError,
                "could not open temporary file \"{}\": {e}",
                self.path.display()
            )
        })?;
        Ok(BlockReader {
            reader: BufReader::with_capacity(32 * 1024, file),
            types: self.types.clone(),
            buf: Vec::new(),
        })
    }
}

impl Drop for SpillFile {
    fn drop(&mut self) {
        self.writer = None;
        // Nothing to do about a failure here: startup removes leftovers.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Reads a [`SpillFile`]'s blocks back.
pub struct BlockReader {
    reader: BufReader<File>,
    types: Vec<DataType>,
    buf: Vec<u8>,
}

impl BlockReader {
    /// The next block, or `None` at the end.
    pub fn next_block(&mut self) -> Result<Option<Batch>> {
        read_block(&mut self.reader, &self.types, &mut self.buf)
    }
}

/// Reads several files one after the other as an operator's batches.
pub struct FilesOp<'a> {
    files: Vec<SpillFile>,
    current: Option<BlockReader>,
    ctx: &'a ExecContext,
}

impl<'a> FilesOp<'a> {
    /// The rows of `files`, in order.
    pub fn new(mut files: Vec<SpillFile>, ctx: &'a ExecContext) -> FilesOp<'a> {
        files.reverse();
        FilesOp {
            files,
            current: None,
            ctx,
        }
    }
}

impl Operator for FilesOp<'_> {
    fn next(&mut self) -> Result<Option<Batch>> {
        loop {
            self.ctx.check_cancel()?;
            if let Some(r) = &mut self.current {
                if let Some(b) = r.next_block()? {
                    return Ok(Some(b));
                }
                self.current = None;
            }
            // The file is deleted once read.
            let Some(mut f) = self.files.pop() else {
                return Ok(None);
            };
            self.current = Some(f.reader()?);
        }
    }
}

/// The hash that picks a row's partition: seeded once per operator, so that
/// every depth of one operator (and every participant of a parallel one)
/// agrees.
#[derive(Clone, Default)]
pub struct PartitionHasher {
    builder: DefaultHashBuilder,
}

impl PartitionHasher {
    /// A hasher for `depth` (different depths split differently).
    #[inline]
    pub fn hasher(&self, depth: u32) -> impl Hasher {
        let mut h = self.builder.build_hasher();
        h.write_u32(depth);
        h
    }

    /// The hash of row `row` of the key columns `keys` at `depth`.
    #[inline]
    pub fn hash_row(&self, depth: u32, keys: &[&Vector], row: usize) -> u64 {
        let mut h = self.hasher(depth);
        for k in keys {
            hash_at(k, row, &mut h);
        }
        h.finish()
    }
}

/// The partition of a row whose hash is `hash`, of `n`.
#[inline]
pub fn partition_of(hash: u64, n: usize) -> u32 {
    ((hash >> 32) % n as u64) as u32
}

/// How many partitions a spill of a table limited to `limit` bytes uses:
/// PostgreSQL's 4 to 1024, here by memory (each partition buffers up to a
/// batch before writing), at most 32.
pub fn partition_count(limit: usize) -> usize {
    (limit / (256 * 1024)).clamp(4, 32)
}

/// Rows split into partition files (see the module doc).
pub struct Partitions {
    files: Vec<Option<SpillFile>>,
    /// Rows waiting to be written, per partition.
    pending: Vec<Batch>,
    /// Scratch: the rows of one batch per partition.
    rows: Vec<Vec<u32>>,
    scratch: Vec<u8>,
}

impl Partitions {
    /// `n` empty partitions.
    pub fn new(n: usize) -> Partitions {
        Partitions {
            files: (0..n).map(|_| None).collect(),
            pending: (0..n).map(|_| Batch::default()).collect(),
            rows: vec![Vec::new(); n],
            scratch: Vec::new(),
        }
    }

    /// The number of partitions.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there are none (never: at least 4).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Adds the rows of `b` whose `part` entry is a partition number (rows
    /// whose entry is `u32::MAX` are skipped).
    pub fn add(&mut self, ctx: &ExecContext, b: &Batch, part: &[u32]) -> Result<()> {
        for r in &mut self.rows {
            r.clear();
        }
        for (i, &p) in part.iter().enumerate() {
            if let Some(r) = self.rows.get_mut(p as usize) {
                r.push(i as u32);
            }
        }
        for p in 0..self.files.len() {
            if self.rows[p].is_empty() {
                continue;
            }
            let taken = b.take(&self.rows[p]);
            let pending = &mut self.pending[p];
            if pending.columns.is_empty() {
                *pending = taken;
            } else {
                pending.extend(&taken);
            }
            if pending.len >= BATCH_SIZE {
                self.flush(ctx, p)?;
            }
        }
        Ok(())
    }

    fn flush(&mut self, ctx: &ExecContext, p: usize) -> Result<()> {
        let pending = std::mem::take(&mut self.pending[p]);
        if pending.len == 0 {
            return Ok(());
        }
        if self.files[p].is_none() {
            self.files[p] = Some(SpillFile::create(ctx)?);
        }
        let f = self.files[p].as_mut().expect("created above");
        f.write_batch(&pending, &mut self.scratch)
    }

    /// Writes what is buffered; the files by partition (`None`: no rows),
    /// and the bytes written.
    pub fn finish(mut self, ctx: &ExecContext) -> Result<(Vec<Option<SpillFile>>, u64)> {
        for p in 0..self.files.len() {
            self.flush(ctx, p)?;
        }
        let mut bytes = 0;
        for f in self.files.iter_mut().flatten() {
            f.finish()?;
            bytes += f.bytes();
        }
        Ok((self.files, bytes))
    }
}

/// What EXPLAIN ANALYZE reports of a hash table's memory (PostgreSQL's
/// `Batches: N  Memory Usage: NkB  Disk Usage: NkB`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HashStats {
    /// A hash join's buckets (0 for an aggregation).
    pub buckets: u64,
    /// Batches processed (1 when nothing spilled).
    pub batches: u64,
    /// The hash join's batches before it had to add more (1).
    pub batches_original: u64,
    /// The peak memory of the hash table, in bytes.
    pub peak_bytes: u64,
    /// Bytes written to temporary files.
    pub disk_bytes: u64,
}

impl HashStats {
    /// Adds another participant's figures (parallel plans: sums, peaks).
    pub fn add(&mut self, o: &HashStats) {
        self.buckets = self.buckets.max(o.buckets);
        self.batches = self.batches.max(o.batches);
        self.batches_original = self.batches_original.max(o.batches_original);
        self.peak_bytes = self.peak_bytes.max(o.peak_bytes);
        self.disk_bytes += o.disk_bytes;
    }
}

pub use crate::vector::vector_bytes;

/// Encodes rows `rows` of `b` (in that order) as one block (see the module
/// doc) into `out`.
pub fn encode_block(b: &Batch, rows: &[u32], out: &mut Vec<u8>) {
    fn put<T: Copy, const N: usize>(
        out: &mut Vec<u8>,
        v: &[T],
        rows: &[u32],
        bytes: impl Fn(T) -> [u8; N],
    ) {
        for &r in rows {
            out.extend_from_slice(&bytes(v[r as usize]));
        }
    }
    out.clear();
    out.extend_from_slice(&(rows.len() as u32).to_le_bytes());
    for c in &b.columns {
        match &c.nulls {
            Some(n) => {
                out.push(1);
                out.extend(rows.iter().map(|&r| n[r as usize] as u8));
            }
            None => out.push(0),
        }
        match &c.data {
            Data::Bool(v) => out.extend(rows.iter().map(|&r| v[r as usize] as u8)),
            Data::I16(v) => put(out, v, rows, i16::to_le_bytes),
            Data::I32(v) => put(out, v, rows, i32::to_le_bytes),
            Data::I64(v) => put(out, v, rows, i64::to_le_bytes),
            Data::F32(v) => put(out, v, rows, f32::to_le_bytes),
            Data::F64(v) => put(out, v, rows, f64::to_le_bytes),
            Data::Str(v) => {
                let mut end = 0u32;
                for &r in rows {
                    end += v.get(r as usize).len() as u32;
                    out.extend_from_slice(&end.to_le_bytes());
                }
                for &r in rows {
                    out.extend_from_slice(v.get(r as usize).as_bytes());
                }
            }
            Data::Any(v) => {
                for &r in rows {
                    let start = out.len();
                    out.extend_from_slice(&[0; 4]);
                    v[r as usize].encode(out);
                    let len = (out.len() - start - 4) as u32;
                    out[start..start + 4].copy_from_slice(&len.to_le_bytes());
                }
            }
        }
    }
}

/// A temporary file that does not hold what [`encode_block`] wrote.
fn corrupt() -> Error {
    Error::internal("temporary file is corrupt".to_string())
}

/// Reads the next block of a file (`None` at its end), through `buf`
/// (reused from block to block).
pub fn read_block(
    r: &mut impl Read,
    types: &[DataType],
    buf: &mut Vec<u8>,
) -> Result<Option<Batch>> {
    let mut len = [0u8; 8];
    match r.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    buf.clear();
    buf.resize(u64::from_le_bytes(len) as usize, 0);
    r.read_exact(buf)?;
    decode_block(buf, types).map(Some)
}

/// Decodes one block written by [`encode_block`].
fn decode_block(buf: &[u8], types: &[DataType]) -> Result<Batch> {
    let mut p = 0usize;
    let mut take = |k: usize| -> Result<&[u8]> {
        let s = buf.get(p..p + k).ok_or_else(corrupt)?;
        p += k;
        Ok(s)
    };
    fn get<T, const N: usize>(b: &[u8], from: impl Fn([u8; N]) -> T) -> Vec<T> {
        b.chunks_exact(N)
            .map(|c| {
                let mut a = [0u8; N];
                a.copy_from_slice(c);
                from(a)
            })
            .collect()
    }
    let u32_at = |s: &[u8]| get(s, u32::from_le_bytes).first().copied().unwrap_or(0);
    let n = u32_at(take(4)?) as usize;
    let mut columns = Vec::with_capacity(types.len());
    for ty in types {
        let nulls = match take(1)?[0] {
            0 => None,
            _ => Some(take(n)?.iter().map(|&x| x != 0).collect()),
        };
        let data = match Data::with_capacity(ty, 0) {
            Data::Bool(_) => Data::Bool(take(n)?.iter().map(|&x| x != 0).collect()),
            Data::I16(_) => Data::I16(get(take(2 * n)?, i16::from_le_bytes)),
            Data::I32(_) => Data::I32(get(take(4 * n)?, i32::from_le_bytes)),
            Data::I64(_) => Data::I64(get(take(8 * n)?, i64::from_le_bytes)),
            Data::F32(_) => Data::F32(get(take(4 * n)?, f32::from_le_bytes)),
            Data::F64(_) => Data::F64(get(take(8 * n)?, f64::from_le_bytes)),
            Data::Str(_) => {
                let ends = get(take(4 * n)?, u32::from_le_bytes);
                let bytes = ends.last().map_or(0, |&e| e as usize);
                let text = std::str::from_utf8(take(bytes)?).map_err(|_| corrupt())?;
                Data::Str(StrVec::from_raw_parts(text.to_owned(), ends).ok_or_else(corrupt)?)
            }
            Data::Any(_) => {
                let mut v = Vec::with_capacity(n);
                for i in 0..n {
                    let k = u32_at(take(4)?) as usize;
                    let bytes = take(k)?;
                    let null = nulls.as_ref().is_some_and(|m: &Vec<bool>| m[i]);
                    v.push(if null {
                        Value::Null
                    } else {
                        Value::decode(ty, bytes)
                    });
                }
                Data::Any(v)
            }
        };
        let mut col = Vector::from_data(*ty, data);
        col.nulls = nulls;
        columns.push(col);
    }
    Ok(Batch { columns, len: n })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_round_trip_and_files_are_deleted_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ExecContext::for_tests(Some(dir.path().to_path_buf()));
        let b = Batch::new(vec![
            Vector::from_values(
                DataType::Int4,
                &[Value::Int4(1), Value::Null, Value::Int4(-7)],
            ),
            Vector::from_values(
                DataType::Text,
                &[Value::text("a"), Value::text(""), Value::Null],
            ),
        ]);
        let mut f = SpillFile::create(&ctx).unwrap();
        let mut scratch = Vec::new();
        f.write_batch(&b, &mut scratch).unwrap();
        f.write_rows(&b, &[2, 0], &mut scratch).unwrap();
        assert_eq!(f.rows(), 5);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let mut r = f.reader().unwrap();
        let one = r.next_block().unwrap().unwrap();
        assert_eq!(
            (0..3).map(|i| one.row(i)).collect::<Vec<_>>(),
            (0..3).map(|i| b.row(i)).collect::<Vec<_>>()
        );
        let two = r.next_block().unwrap().unwrap();
        assert_eq!(two.row(0), b.row(2));
        assert_eq!(two.row(1), b.row(0));
        assert!(r.next_block().unwrap().is_none());
        drop(r);
        drop(f);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn clear_temp_dir_removes_leftovers() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = temp_dir(dir.path());
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::write(tmp.join("pgsql_tmp1.0"), b"x").unwrap();
        clear_temp_dir(dir.path()).unwrap();
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
        clear_temp_dir(&dir.path().join("nosuch")).unwrap();
    }
}
