//! The byte encoding of [`HeapRecord`]s, for the write-ahead log: a tag
//! byte, then the record's fields little-endian (vectors and byte strings
//! with a length prefix). [`HeapRecord::decode`] rejects unknown tags,
//! truncated records and trailing bytes with XX001, never a panic. The
//! round trip is tested beside the records in [`super::record`].

use super::record::{HeapRecord, XmaxSet};
use crate::err;
use crate::error::Result;

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let s = self
            .b
            .get(self.at..self.at + n)
            .ok_or_else(|| err!(DataCorrupted, "heap record is truncated"))?;
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn bytes(&mut self) -> Result<Vec<u8>> {
        let n = self.u32()? as usize;
        Ok(self.take(n)?.to_vec())
    }
    fn u16s(&mut self) -> Result<Vec<u16>> {
        let n = self.u16()? as usize;
        (0..n).map(|_| self.u16()).collect()
    }
    fn xmax_set(&mut self) -> Result<XmaxSet> {
        Ok(XmaxSet {
            offset: self.u16()?,
            xmax: self.u32()?,
            raw_cid: self.u32()?,
            combo: self.u8()? != 0,
            ctid: (self.u32()?, self.u16()?),
        })
    }
}

fn put_xmax_set(out: &mut Vec<u8>, s: &XmaxSet) {
    out.extend_from_slice(&s.offset.to_le_bytes());
    out.extend_from_slice(&s.xmax.to_le_bytes());
    out.extend_from_slice(&s.raw_cid.to_le_bytes());
    out.push(s.combo as u8);
    out.extend_from_slice(&s.ctid.0.to_le_bytes());
    out.extend_from_slice(&s.ctid.1.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

fn put_u16s(out: &mut Vec<u8>, v: &[u16]) {
    out.extend_from_slice(&(v.len() as u16).to_le_bytes());
    for x in v {
        out.extend_from_slice(&x.to_le_bytes());
    }
}

fn flags2(a: bool, b: bool) -> u8 {
    a as u8 | (b as u8) << 1
}

impl HeapRecord {
    /// Appends the record's bytes to `out`: a tag byte, then its fields
    /// little-endian.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            HeapRecord::Insert {
                offset,
                init_page,
                clear_all_visible,
                tuple,
            } => {
                out.push(1);
                out.push(flags2(*init_page, *clear_all_visible));
                out.extend_from_slice(&offset.to_le_bytes());
                put_bytes(out, tuple);
            }
            HeapRecord::MultiInsert {
                init_page,
                clear_all_visible,
                offsets,
                lens,
                data,
            } => {
                out.push(2);
                out.push(flags2(*init_page, *clear_all_visible));
                put_u16s(out, offsets);
                put_u16s(out, lens);
                put_bytes(out, data);
            }
            HeapRecord::Delete {
                set,
                clear_all_visible,
            } => {
                out.push(3);
                out.push(*clear_all_visible as u8);
                put_xmax_set(out, set);
            }
            HeapRecord::UpdateOld {
                set,
                clear_all_visible,
            } => {
                out.push(4);
                out.push(*clear_all_visible as u8);
                put_xmax_set(out, set);
            }
            HeapRecord::UpdateNew {
                offset,
                init_page,
                clear_all_visible,
                tuple,
            } => {
                out.push(5);
                out.push(flags2(*init_page, *clear_all_visible));
                out.extend_from_slice(&offset.to_le_bytes());
                put_bytes(out, tuple);
            }
            HeapRecord::HotUpdate {
                set,
                new_offset,
                hot,
                clear_all_visible,
                tuple,
            } => {
                out.push(6);
                out.push(flags2(*hot, *clear_all_visible));
                put_xmax_set(out, set);
                out.extend_from_slice(&new_offset.to_le_bytes());
                put_bytes(out, tuple);
            }
            HeapRecord::Prune {
                redirected,
                dead,
                unused,
                prune_xid,
            } => {
                // Tag 7 alone (the page's prune hint cleared); 17 with the
                // hint pruning leaves.
                out.push(if *prune_xid == 0 { 7 } else { 17 });
                out.extend_from_slice(&(redirected.len() as u16).to_le_bytes());
                for (a, b) in redirected {
                    out.extend_from_slice(&a.to_le_bytes());
                    out.extend_from_slice(&b.to_le_bytes());
                }
                put_u16s(out, dead);
                put_u16s(out, unused);
                if *prune_xid != 0 {
                    out.extend_from_slice(&prune_xid.to_le_bytes());
                }
            }
            HeapRecord::Defragment => out.push(8),
            HeapRecord::SetAllVisible => out.push(9),
            HeapRecord::ClearAllVisible => out.push(10),
            HeapRecord::VmSet {
                heap_block,
                bits,
                count,
                heap_all_visible,
                slot,
            } => {
                // Tag 11 alone; 16 with what it carries (a flags byte: 1 the
                // heap page's flag, 2 a slot, packed as `sumfork` packs it).
                let carries = *heap_all_visible || slot.is_some();
                out.push(if carries { 16 } else { 11 });
                out.extend_from_slice(&heap_block.to_le_bytes());
                out.push(*bits);
                out.extend_from_slice(&count.to_le_bytes());
                if carries {
                    out.push(u8::from(*heap_all_visible) | if slot.is_some() { 2 } else { 0 });
                    if let Some(slot) = slot {
                        crate::access::sumfork::pack_slot(slot, out);
                    }
                }
            }
            HeapRecord::VmClear { heap_block } => {
                out.push(12);
                out.extend_from_slice(&heap_block.to_le_bytes());
            }
            HeapRecord::Freeze { offsets } => {
                out.push(13);
                put_u16s(out, offsets);
            }
            HeapRecord::SummarySet { heap_block, slot } => {
                out.push(14);
                out.extend_from_slice(&heap_block.to_le_bytes());
                put_bytes(out, slot);
            }
            HeapRecord::VacuumDead { offsets } => {
                out.push(15);
                put_u16s(out, offsets);
            }
        }
    }

    /// Decodes a record written by [`encode`](Self::encode); the whole of
    /// `b` must be one record.
    pub fn decode(b: &[u8]) -> Result<HeapRecord> {
        let mut r = Reader { b, at: 0 };
        let rec = match r.u8()? {
            1 | 5 => {
                let tag = b[0];
                let f = r.u8()?;
                let offset = r.u16()?;
                let tuple = r.bytes()?;
                let (init_page, clear_all_visible) = (f & 1 != 0, f & 2 != 0);
                if tag == 1 {
                    HeapRecord::Insert {
                        offset,
                        init_page,
                        clear_all_visible,
                        tuple,
                    }
                } else {
                    HeapRecord::UpdateNew {
                        offset,
                        init_page,
                        clear_all_visible,
                        tuple,
                    }
                }
            }
            2 => {
                let f = r.u8()?;
                HeapRecord::MultiInsert {
                    init_page: f & 1 != 0,
                    clear_all_visible: f & 2 != 0,
                    offsets: r.u16s()?,
                    lens: r.u16s()?,
                    data: r.bytes()?,
                }
            }
            3 => {
                let clear_all_visible = r.u8()? != 0;
                HeapRecord::Delete {
                    clear_all_visible,
                    set: r.xmax_set()?,
                }
            }
            4 => {
                let clear_all_visible = r.u8()? != 0;
                HeapRecord::UpdateOld {
                    clear_all_visible,
                    set: r.xmax_set()?,
                }
            }
            6 => {
                let f = r.u8()?;
                HeapRecord::HotUpdate {
                    hot: f & 1 != 0,
                    clear_all_visible: f & 2 != 0,
                    set: r.xmax_set()?,
                    new_offset: r.u16()?,
                    tuple: r.bytes()?,
                }
            }
            7 | 17 => {
                let tag = b[0];
                let n = r.u16()? as usize;
                let redirected = (0..n)
                    .map(|_| Ok((r.u16()?, r.u16()?)))
                    .collect::<Result<Vec<_>>>()?;
                HeapRecord::Prune {
                    redirected,
                    dead: r.u16s()?,
                    unused: r.u16s()?,
                    prune_xid: if tag == 17 { r.u32()? } else { 0 },
                }
            }
            8 => HeapRecord::Defragment,
            9 => HeapRecord::SetAllVisible,
            10 => HeapRecord::ClearAllVisible,
            11 => HeapRecord::VmSet {
                heap_block: r.u32()?,
                bits: r.u8()?,
                count: r.u16()?,
                heap_all_visible: false,
                slot: None,
            },
            16 => {
                let (heap_block, bits, count) = (r.u32()?, r.u8()?, r.u16()?);
                let flags = r.u8()?;
                if flags & !3 != 0 {
                    return Err(err!(
                        DataCorrupted,
                        "invalid visibility-map record flags {flags}"
                    ));
                }
                let slot = if flags & 2 != 0 {
                    let s =
                        crate::access::sumfork::unpack_slot(r.b, &mut r.at).ok_or_else(|| {
                            err!(DataCorrupted, "invalid summary slot in a heap record")
                        })?;
                    Some(s)
                } else {
                    None
                };
                HeapRecord::VmSet {
                    heap_block,
                    bits,
                    count,
                    heap_all_visible: flags & 1 != 0,
                    slot,
                }
            }
            12 => HeapRecord::VmClear {
                heap_block: r.u32()?,
            },
            13 => HeapRecord::Freeze { offsets: r.u16s()? },
            14 => HeapRecord::SummarySet {
                heap_block: r.u32()?,
                slot: r.bytes()?,
            },
            15 => HeapRecord::VacuumDead { offsets: r.u16s()? },
            t => return Err(err!(DataCorrupted, "invalid heap record type {t}")),
        };
        if r.at != b.len() {
            return Err(err!(
                DataCorrupted,
                "heap record has {} trailing bytes",
                b.len() - r.at
            ));
        }
        Ok(rec)
    }
}
