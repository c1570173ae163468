//! Multi-insert: many tuples onto whole pages with one lock and one record
//! per page (`INSERT ... SELECT`, COPY into existing free space), and COPY
//! FREEZE's variant; and COPY's new pages, built whole off the buffer pool
//! ([`PageImages`]) and placed by [`HeapRelation::insert_page_images`].
//!
//! ## Page images (COPY)
//! A COPY's parse stage packs its tuples into page images: each page is
//! initialised and filled by the same functions redo uses for a
//! multi-insert record (`page::init`, `page::add_item`), each tuple's header
//! prepared as an insert prepares it. The inserter extends the relation
//! through the bulk-write ring, copies an image into the new buffer, sets
//! the block number in its tuples' ctids and logs the page as a full-page
//! image under the buffer's lock (compressed when `wal_compression` is on),
//! so redo restores exactly the bytes written: run time and redo cannot
//! diverge. The relation's known free space is filled first, tuple by tuple
//! through the multi-insert path; then every page is new.
//!
//! ## Frozen pages (COPY FREEZE)
//! [`HeapRelation::multi_insert_frozen`] writes tuples with `xmin` frozen
//! (`HEAP_XMIN_FROZEN`: committed and invalid, the xid kept for
//! inspection). A page the load found new, or already all-visible (filled
//! by an earlier frozen batch), gets `PD_ALL_VISIBLE` and its visibility-map
//! bits all-visible + all-frozen with its live-tuple count, while its lock
//! is still held, through the same records VACUUM uses (`SetAllVisible`,
//! `VmSet`, which carries the page's summary slot when the table's column
//! kinds are known: COPY gives them, `access::sumfork`), so redo sets the
//! same. A page that holds other tuples of the
//! transaction (an `INSERT` before the COPY) keeps them as they are and is
//! not marked. So `count(*)` right after the COPY, and VACUUM, skip those
//! pages; no VACUUM is needed after COMMIT.
//!
//! The caller guarantees what makes this safe (PostgreSQL's rule): the
//! relation file was created by the loading transaction (`CREATE TABLE` or
//! `TRUNCATE` in it), so no other session can read it before that
//! transaction commits, and its abort removes the file with every frozen
//! row in it.

use super::heapam::{HeapRelation, Tid};
use super::pageops::prepare_new_tuple;
use super::record::HeapRecord;
use super::tuple;
use crate::access::vm;
use crate::err;
use crate::error::Result;
use crate::storage::page::{self, maxalign, LP_NORMAL};
use crate::storage::{BlockNumber, ForkNumber, Ring, BLCKSZ};
use crate::txn::{CommandId, Xid};
use crate::wal::record::CompressedFpi;

/// Free bytes of a new page: everything between the header and the end.
const EMPTY_PAGE_FREE: usize = crate::storage::BLCKSZ - page::PAGE_HEADER_SIZE;

impl HeapRelation {
    /// Inserts many tuples, filling whole pages with one lock and one record
    /// per page (COPY, `INSERT ... SELECT`). `data` holds the tuples back to
    /// back, `lens` their lengths. Pages come from the free-space map first,
    /// then from extending the relation through `ring` (a bulk-write ring).
    /// The tids are appended to `tids` when given.
    pub fn multi_insert(
        &self,
        data: &[u8],
        lens: &[u16],
        xid: Xid,
        cid: CommandId,
        ring: Option<&mut Ring>,
        tids: Option<&mut Vec<Tid>>,
    ) -> Result<()> {
        self.insert_many(data, lens, (xid, cid), ring, tids, false, true)
            .map(|_| ())
    }

    /// [`HeapRelation::multi_insert`] for COPY FREEZE: the tuples are
    /// written frozen and the pages they fill all-visible and all-frozen
    /// (see the module doc). Only for a relation file created by `xid`'s
    /// transaction.
    pub fn multi_insert_frozen(
        &self,
        data: &[u8],
        lens: &[u16],
        xid: Xid,
        cid: CommandId,
        ring: Option<&mut Ring>,
    ) -> Result<()> {
        self.insert_many(data, lens, (xid, cid), ring, None, true, true)
            .map(|_| ())
    }

    /// Checks that `lens` cover `data` exactly and each tuple fits a page.
    fn check_batch(data: &[u8], lens: &[u16]) -> Result<()> {
        let total: usize = lens.iter().map(|&l| l as usize).sum();
        if total != data.len() {
            return Err(err!(
                InternalError,
                "multi-insert lengths do not add up to the data"
            ));
        }
        for &l in lens {
            Self::check_size(l as usize)?;
        }
        Ok(())
    }

    /// Inserts the tuples of `data` (lengths `lens`) in order; with
    /// `extend` false only into pages the free-space map knows, stopping at
    /// the first tuple none of them has room for. Returns how many were
    /// inserted.
    #[allow(clippy::too_many_arguments)]
    fn insert_many(
        &self,
        data: &[u8],
        lens: &[u16],
        (xid, cid): (Xid, CommandId),
        mut ring: Option<&mut Ring>,
        mut tids: Option<&mut Vec<Tid>>,
        frozen: bool,
        extend: bool,
    ) -> Result<usize> {
        Self::check_batch(data, lens)?;
        let _size = self.hold_size();
        let (mut next, mut at) = (0usize, 0usize);
        let (mut offsets, mut rec_lens, mut rec_data) = (Vec::new(), Vec::new(), Vec::new());
        let reserve = self.fill_reserve();
        while next < lens.len() {
            let need = maxalign(lens[next] as usize) + reserve;
            let (block, buf) = if extend {
                self.page_for(need, None, ring.as_deref_mut())?
            } else {
                match self.fsm().find(need, None) {
                    Some(b) if b < self.nblocks()? => (
                        b,
                        self.pool().read_buffer(
                            self.rel(),
                            ForkNumber::Main,
                            b,
                            ring.as_deref_mut(),
                        )?,
                    ),
                    _ => return Ok(next),
                }
            };
            let mut g = buf.write();
            self.check_page(block, &g[..])?;
            let new = page::is_new(&g[..]);
            // Plan the page: how many of the next tuples fit, at which offsets.
            let (mut max, mut free, mut has_free_lines) = if new {
                (0u16, EMPTY_PAGE_FREE, false)
            } else {
                let p = &g[..];
                (
                    page::max_offset(p),
                    page::upper(p) as usize - page::lower(p) as usize,
                    page::flags(p) & page::PD_HAS_FREE_LINES != 0,
                )
            };
            offsets.clear();
            rec_lens.clear();
            rec_data.clear();
            let first = next;
            while next < lens.len() {
                let len = lens[next] as usize;
                let mut reuse = None;
                if has_free_lines {
                    reuse = (1..=max).find(|&o| {
                        page::item_id(&g[..], o).flags == page::LP_UNUSED && !offsets.contains(&o)
                    });
                    has_free_lines = reuse.is_some();
                }
                let lp = if reuse.is_some() {
                    0
                } else {
                    page::ITEM_ID_SIZE
                };
                // The fill factor's share stays free, except that a new
                // page takes its first tuple whatever its size.
                let keep = if new && offsets.is_empty() {
                    0
                } else {
                    reserve
                };
                if free < maxalign(len) + lp + keep
                    || (reuse.is_none() && max as usize >= page::MAX_HEAP_TUPLES_PER_PAGE)
                {
                    break;
                }
                free -= maxalign(len) + lp;
                let off = reuse.unwrap_or_else(|| {
                    max += 1;
                    max
                });
                offsets.push(off);
                rec_lens.push(len as u16);
                let start = rec_data.len();
                rec_data.extend_from_slice(&data[at..at + len]);
                let t = &mut rec_data[start..];
                prepare_new_tuple(t, xid, cid, block, off, false, false);
                if frozen {
                    tuple::set_infomask(t, tuple::infomask(t) | tuple::HEAP_XMIN_FROZEN);
                }
                at += len;
                next += 1;
            }
            if next == first {
                self.fsm().note(
                    block,
                    if new {
                        0
                    } else {
                        page::heap_free_space(&g[..])
                    },
                );
                if new {
                    return Err(err!(InternalError, "tuple does not fit on an empty page"));
                }
                continue;
            }
            let all_visible = !new && page::is_all_visible(&g[..]);
            // Frozen tuples keep an all-visible page all-visible.
            let mark_frozen = frozen && (new || all_visible);
            let clear = all_visible && !mark_frozen;
            let rec = HeapRecord::MultiInsert {
                init_page: new,
                clear_all_visible: clear,
                offsets: std::mem::take(&mut offsets),
                lens: std::mem::take(&mut rec_lens),
                data: std::mem::take(&mut rec_data),
            };
            self.apply_heap(block, &mut g, &rec, clear, xid)?;
            if mark_frozen {
                self.log_all_visible(block, &mut g, xid)?;
                let p = &g[..];
                let live = (1..=page::max_offset(p))
                    .filter(|&o| page::item_id(p, o).flags == LP_NORMAL)
                    .count();
                let live = u16::try_from(live).expect("a page holds fewer than 65536 tuples");
                self.set_vm(
                    block,
                    vm::VM_ALL_VISIBLE | vm::VM_ALL_FROZEN,
                    live,
                    Some(&g[..]),
                )?;
            }
            self.fsm().note(block, page::heap_free_space(&g[..]));
            if let HeapRecord::MultiInsert {
                offsets: o,
                lens: l,
                data: d,
                ..
            } = rec
            {
                if let Some(tids) = tids.as_deref_mut() {
                    tids.extend(o.iter().map(|&offset| Tid { block, offset }));
                }
                (offsets, rec_lens, rec_data) = (o, l, d);
            }
        }
        Ok(next)
    }
}

/// New heap pages filled off the buffer pool, back to back (COPY's parse
/// stage builds them; [`HeapRelation::insert_page_images`] puts them into
/// the relation): each page is initialised as redo initialises it and
/// filled by [`page::add_item`], tuple after tuple, each tuple's header
/// prepared for `xid`/`cid` as an insert prepares it (frozen for COPY
/// FREEZE). Only the block number in each ctid is left for placement.
#[derive(Debug)]
pub struct PageImages {
    /// The pages, `BLCKSZ` bytes each; the last one is being filled.
    pages: Vec<u8>,
    /// Pages before the one being filled (complete).
    full: usize,
    /// Tuples in all the pages.
    tuples: usize,
    xid: Xid,
    cid: CommandId,
    frozen: bool,
    /// Bytes each page keeps free once it holds a tuple (the table's fill
    /// factor, [`HeapRelation::fill_reserve`]).
    reserve: usize,
}

impl PageImages {
    /// No pages yet; tuples will be inserted by `xid` at command `cid`.
    pub fn new(xid: Xid, cid: CommandId, frozen: bool) -> PageImages {
        PageImages {
            pages: Vec::new(),
            full: 0,
            tuples: 0,
            xid,
            cid,
            frozen,
            reserve: 0,
        }
    }

    /// The same, each page keeping `bytes` free (the table's fill factor:
    /// [`HeapRelation::fill_reserve`]).
    pub fn reserving(mut self, bytes: usize) -> PageImages {
        self.reserve = bytes;
        self
    }

    /// Appends tuple `t` (as [`tuple::form_tuple`] made it) to the page
    /// being filled, or to a new page when it does not fit. Fails, adding
    /// nothing, when no page could hold it.
    pub fn push(&mut self, t: &[u8]) -> Result<()> {
        HeapRelation::check_size(t.len())?;
        let mut at = self.full * BLCKSZ;
        let mut off = None;
        if self.pages.len() > at {
            let p = &mut self.pages[at..at + BLCKSZ];
            if page::heap_free_space(p) >= maxalign(t.len()) + self.reserve {
                off = page::add_item(p, t, None);
            }
            if off.is_none() {
                self.full += 1;
                at += BLCKSZ;
            }
        }
        let off = match off {
            Some(o) => o,
            None => {
                self.pages.resize(at + BLCKSZ, 0);
                let p = &mut self.pages[at..at + BLCKSZ];
                page::init(p, 0);
                page::add_item(p, t, None).expect("a checked tuple fits an empty page")
            }
        };
        let p = &mut self.pages[at..at + BLCKSZ];
        let t = page::get_item_mut(p, off).expect("the tuple just added");
        prepare_new_tuple(t, self.xid, self.cid, 0, off, false, false);
        if self.frozen {
            tuple::set_infomask(t, tuple::infomask(t) | tuple::HEAP_XMIN_FROZEN);
        }
        self.tuples += 1;
        Ok(())
    }

    /// [`PageImages::new`] filling `buf`'s memory (cleared first).
    pub fn with_buffer(mut buf: Vec<u8>, xid: Xid, cid: CommandId, frozen: bool) -> PageImages {
        buf.clear();
        PageImages {
            pages: buf,
            ..PageImages::new(xid, cid, frozen)
        }
    }

    /// Complete pages (the one being filled not counted).
    pub fn full_pages(&self) -> usize {
        self.full
    }

    /// Tuples added so far.
    pub fn tuples(&self) -> usize {
        self.tuples
    }

    /// Takes the complete pages out, back to back; the page being filled
    /// stays, moved into `spare` (cleared first), which becomes the buffer.
    pub fn take_full(&mut self, mut spare: Vec<u8>) -> Vec<u8> {
        spare.clear();
        let cut = self.full * BLCKSZ;
        spare.extend_from_slice(&self.pages[cut..]);
        let mut out = std::mem::replace(&mut self.pages, spare);
        out.truncate(cut);
        self.full = 0;
        out
    }

    /// Takes every page out, the one being filled too.
    pub fn take_all(&mut self) -> Vec<u8> {
        self.full = 0;
        std::mem::take(&mut self.pages)
    }
}

/// Sets the ctid block of every tuple of each page in `pages` (whole pages
/// back to back): `first` for the first page, `first + 1` for the next...
/// (COPY predicts where its pages will land, so that they can be
/// compressed for the log before they are placed).
pub fn set_image_blocks(pages: &mut [u8], first: BlockNumber) {
    for (i, img) in pages.chunks_exact_mut(BLCKSZ).enumerate() {
        set_ctid_blocks(img, first + i as BlockNumber);
    }
}

fn set_ctid_blocks(img: &mut [u8], block: BlockNumber) {
    for off in 1..=page::max_offset(img) {
        if let Some(t) = page::get_item_mut(img, off) {
            tuple::set_ctid(t, block, off);
        }
    }
}

/// A page image compressed ahead of its placement, for the block it was
/// predicted to land on (see [`HeapRelation::insert_page_images`]).
pub type Precompressed<'a> = (BlockNumber, &'a CompressedFpi);

impl HeapRelation {
    /// Puts pages built by [`PageImages`] (`images`, whole pages back to
    /// back) into the relation, in order. Each goes onto a new page at the
    /// end of the relation, through `ring`: the image is copied into the
    /// buffer, its tuples' ctids get the block number, and the page is
    /// logged as one full-page image (compressed with `wal_compression`)
    /// — PostgreSQL logs bulk-built pages with `log_newpage` — so redo
    /// restores exactly these bytes. With `frozen` the page is then marked
    /// all-visible and all-frozen as [`HeapRelation::multi_insert_frozen`]
    /// marks its pages.
    ///
    /// `pre`, when not empty, holds per image the block it was predicted to
    /// land on (its ctids set for it by [`set_image_blocks`]) and its
    /// compressed form for that block; an image that lands there is logged
    /// with it, any other gets its ctids set and is compressed here.
    ///
    /// While `fill_first` is set, the tuples go first into the pages the
    /// free-space map knows (space a VACUUM freed, the last page of an
    /// earlier load), as `multi_insert` would put them; once those have no
    /// room for a page's tuples, `fill_first` is cleared and the remaining
    /// tuples and pages go to new pages.
    pub fn insert_page_images(
        &self,
        images: &[u8],
        (xid, cid): (Xid, CommandId),
        frozen: bool,
        mut ring: Option<&mut Ring>,
        fill_first: &mut bool,
        pre: &[Precompressed<'_>],
    ) -> Result<()> {
        if images.len() % BLCKSZ != 0 {
            return Err(err!(InternalError, "page images are not whole pages"));
        }
        let _size = self.hold_size();
        for (i, img) in images.chunks_exact(BLCKSZ).enumerate() {
            if page::is_new(img) || page::max_offset(img) == 0 {
                continue;
            }
            let pre = pre.get(i).copied();
            if *fill_first {
                let (mut data, mut lens) = (Vec::new(), Vec::new());
                for off in 1..=page::max_offset(img) {
                    let t = page::get_item(img, off).expect("an image's tuples are normal");
                    data.extend_from_slice(t);
                    lens.push(t.len() as u16);
                }
                let used = self.insert_many(
                    &data,
                    &lens,
                    (xid, cid),
                    ring.as_deref_mut(),
                    None,
                    frozen,
                    false,
                )?;
                if used == lens.len() {
                    continue;
                }
                *fill_first = false;
                if used > 0 {
                    // What did not fit goes onto new pages, packed again.
                    let mut rest = PageImages::new(xid, cid, frozen).reserving(self.fill_reserve());
                    let mut at: usize = lens[..used].iter().map(|&l| l as usize).sum();
                    for &l in &lens[used..] {
                        rest.push(&data[at..at + l as usize])?;
                        at += l as usize;
                    }
                    for img in rest.take_all().chunks_exact(BLCKSZ) {
                        self.place_image(img, xid, frozen, ring.as_deref_mut(), None)?;
                    }
                    continue;
                }
            }
            self.place_image(img, xid, frozen, ring.as_deref_mut(), pre)?;
        }
        Ok(())
    }

    /// One image onto a new page (see [`HeapRelation::insert_page_images`]).
    fn place_image(
        &self,
        img: &[u8],
        xid: Xid,
        frozen: bool,
        ring: Option<&mut Ring>,
        pre: Option<Precompressed<'_>>,
    ) -> Result<()> {
        let (block, buf) = self.pool().extend(self.rel(), ForkNumber::Main, ring)?;
        let mut g = buf.write();
        if !page::is_new(&g[..]) {
            return Err(err!(
                InternalError,
                "new block {block} of relation {} is not empty",
                self.rel()
            ));
        }
        g.copy_from_slice(img);
        let packed = match pre {
            Some((predicted, c)) if predicted == block => Some(c),
            _ => None,
        };
        if packed.is_none() {
            set_ctid_blocks(&mut g[..], block);
        }
        self.log_page_image(block, &mut g, xid, packed)?;
        if frozen {
            let n = page::max_offset(&g[..]);
            self.log_all_visible(block, &mut g, xid)?;
            self.set_vm(
                block,
                vm::VM_ALL_VISIBLE | vm::VM_ALL_FROZEN,
                n,
                Some(&g[..]),
            )?;
        }
        let mut fsm = self.fsm();
        fsm.target = Some(block);
        fsm.note(block, page::heap_free_space(&g[..]));
        Ok(())
    }
}
