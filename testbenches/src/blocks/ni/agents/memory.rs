//! [`AxiReadSlave`] / [`AxiWriteSlave`]: the memory, with random
//! backpressure, latency and beat gaps; every AR and AW burst checked for
//! shape and PDID, every write's strobed bytes against the golden write.
//! AXI4 error responses come from the memory's fault map
//! ([`SparseMemory::set_fault`], the same in the golden model's memory):
//! a beat of a faulty line answers its RRESP with random data (the NI must
//! not use them), a write burst touching one its BRESP
//! ([`SparseMemory::write_resp`]).

use super::{NiPorts, Report};
use crate::cosim::Mismatch;
use exanet_sim::ni::memory::MemWrite;
use exanet_sim::ni::SparseMemory;
use exanet_sim::rng::Rng;
use std::collections::VecDeque;

/// Memory latency of a burst accepted in `cycle` (0..=23, deterministic).
pub(crate) fn rng_lat(cycle: u64) -> u64 {
    let x = cycle.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (x >> 59) % 24
}

/// One AXI4 read burst being served.
struct Burst {
    addr: u64,
    beats: u32,
    done: u32,
    ready_at: u64,
}

/// The memory's AXI4 read slave: random ARREADY, each burst's first beat
/// after a deterministic latency, random gaps between beats.
pub(crate) struct AxiReadSlave {
    /// Fixed timing (`exanet reproduce`): always ready, no beat gaps,
    /// every burst's first beat this many cycles after its AR.
    fixed: Option<u64>,
    arready: bool,
    bursts: VecDeque<Burst>,
    r_presented: bool,
    /// RRESP of the beat presented.
    r_resp: u8,
    /// Beats taken with RRESP SLVERR or DECERR.
    pub err_beats: u64,
}

impl AxiReadSlave {
    pub fn new() -> Self {
        AxiReadSlave {
            fixed: None,
            arready: false,
            bursts: VecDeque::new(),
            r_presented: false,
            r_resp: 0,
            err_beats: 0,
        }
    }

    /// The same slave with fixed timing: ARREADY always, no gaps between
    /// beats, first beat `latency` cycles after the AR (what a measurement
    /// needs: no random stall in the figures).
    pub fn with_fixed_latency(mut self, latency: u64) -> Self {
        self.fixed = Some(latency);
        self
    }

    /// No burst being served.
    pub fn idle(&self) -> bool {
        self.bursts.is_empty()
    }

    /// During a reset pulse: nothing valid, nothing ready.
    pub fn drive_reset(&mut self, p: &NiPorts) {
        p.m_arready.set(0);
        p.m_rvalid.set(0);
        self.arready = false;
        self.r_presented = false;
    }

    /// Clock low at time `now`: ARREADY, and the next beat from `mem` when
    /// due (random bytes on the data when none is presented).
    pub fn drive(&mut self, p: &NiPorts, rng: &mut Rng, now: u64, mem: &SparseMemory) {
        self.arready = self.fixed.is_some() || rng.chance(0.6);
        p.m_arready.set(self.arready as u64);
        if !self.r_presented {
            if let Some(b) = self.bursts.front() {
                if now >= b.ready_at && (self.fixed.is_some() || rng.chance(0.8)) {
                    self.r_presented = true;
                }
            }
        }
        if self.r_presented {
            let b = self.bursts.front().expect("presented beat has a burst");
            let a = b.addr + 16 * b.done as u64;
            let resp = mem.fault(a);
            if resp == 0 {
                let mut bytes = [0u8; 16];
                mem.read_into(a, &mut bytes);
                p.m_rdata.set_u128(u128::from_le_bytes(bytes));
            } else {
                p.m_rdata.set_u128(rng.next_u128());
            }
            p.m_rresp.set(resp as u64);
            self.r_resp = resp;
            p.m_rvalid.set(1);
        } else {
            p.m_rvalid.set(0);
            p.m_rresp.set(0);
            p.m_rdata.set_u128(rng.next_u128());
        }
    }

    /// An AR accepted: 16-byte aligned, below `lim`, within a 4 KiB page,
    /// size 16, INCR, ARUSER = `pdid`; its first beat is due at
    /// `now + 1 + rng_lat(cycle)`. An R beat taken. Returns, for an AR
    /// accepted, whether it starts a 4 KiB page exactly where the previous
    /// burst ends (a read split at a page boundary).
    pub fn check(
        &mut self,
        p: &NiPorts,
        r: Report,
        now: u64,
        lim: u64,
        pdid: u16,
    ) -> Result<Option<bool>, Mismatch> {
        let mut accepted = None;
        if p.m_arvalid.get() == 1 && self.arready {
            let addr = p.m_araddr.get();
            let beats = p.m_arlen.get() as u32 + 1;
            if !addr.is_multiple_of(16) || addr >= lim || (addr % 4096) + 16 * beats as u64 > 4096 {
                return r.bad(
                    "m_araddr/m_arlen",
                    "16-byte aligned, below 2^addr_bits, within a 4 KiB page".into(),
                    format!("0x{addr:x} len {}", beats - 1),
                );
            }
            if p.m_arsize.get() != 4 || p.m_arburst.get() != 1 {
                return r.bad(
                    "m_arsize/m_arburst",
                    "4/1".into(),
                    format!("{}/{}", p.m_arsize.get(), p.m_arburst.get()),
                );
            }
            if p.m_aruser.get() != pdid as u64 {
                return r.hex("m_aruser", pdid as u64, p.m_aruser.get());
            }
            accepted = Some(self.bursts.back().is_some_and(|b| {
                b.addr + 16 * b.beats as u64 == addr && addr.is_multiple_of(4096)
            }));
            self.bursts.push_back(Burst {
                addr,
                beats,
                done: 0,
                ready_at: now + 1 + self.fixed.unwrap_or_else(|| rng_lat(r.cycle)),
            });
        }
        if self.r_presented && p.m_rready.get() == 1 {
            let b = self.bursts.front_mut().expect("presented beat has a burst");
            b.done += 1;
            self.err_beats += (self.r_resp >= 2) as u64;
            if b.done == b.beats {
                self.bursts.pop_front();
            }
            self.r_presented = false;
        }
        Ok(accepted)
    }
}

/// What the memory's write slave saw in a cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct WriteEvents {
    /// A burst completed (its last W beat): its bytes.
    pub written: Option<usize>,
    /// A B response was taken (`m_bvalid && m_bready`) for a receive
    /// write: the oldest completed burst has landed (the golden model's
    /// `write_landed`).
    pub landed: bool,
    /// The BRESP of a B taken this cycle.
    pub bresp: u8,
    /// A B response was taken for a burst of the allreduce engine (no
    /// golden event: the engine's writes are done at its DOORBELL).
    pub engine_landed: bool,
    /// A B response was taken for a burst of an allreduce fragment the
    /// receive path accepted (no golden event: the engine wrote it to
    /// scratch when it took the fragment).
    pub fragment_landed: bool,
}

/// One burst expected on AXI4: a golden write, or its part in one 4 KiB
/// page (the engine's chunks may cross a page; a burst may not).
struct ExpBurst {
    w: MemWrite,
    pdid: u16,
    kind: BurstKind,
}

/// Whose write a burst is: what its B means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BurstKind {
    /// A data packet's (its B is the golden `write_landed`).
    Data,
    /// The allreduce engine's copy or combining step.
    Engine,
    /// An accepted allreduce fragment's (into scratch).
    Fragment,
}

/// `w` cut at 4 KiB page boundaries.
fn page_parts(w: MemWrite) -> Vec<MemWrite> {
    let mut out = Vec::new();
    let mut off = 0usize;
    while off < w.data.len() {
        let a = w.addr + off as u64;
        let n = (4096 - (a % 4096) as usize).min(w.data.len() - off);
        out.push(MemWrite {
            addr: a,
            data: w.data[off..off + n].to_vec(),
        });
        off += n;
    }
    out
}

/// The memory's AXI4 write slave: random AWREADY / WREADY, each B after a
/// deterministic latency. Every burst must be the next golden memory write
/// (in order, one burst each) with exactly its bytes strobed.
pub(crate) struct AxiWriteSlave {
    /// Fixed timing (`exanet reproduce`): always ready, every B this many
    /// cycles after its last W beat.
    fixed: Option<u64>,
    /// Golden memory writes not yet seen on AXI, as bursts.
    exp: VecDeque<ExpBurst>,
    /// AW accepted: address, beats.
    aw: VecDeque<(u64, u32)>,
    beats: Vec<(u128, u16)>,
    awready: bool,
    wready: bool,
    /// B responses owed (ready time, whose burst, BRESP), and one presented.
    b_owed: VecDeque<(u64, BurstKind, u8)>,
    b_now: bool,
}

impl AxiWriteSlave {
    pub fn new() -> Self {
        AxiWriteSlave {
            fixed: None,
            exp: VecDeque::new(),
            aw: VecDeque::new(),
            beats: Vec::new(),
            awready: false,
            wready: false,
            b_owed: VecDeque::new(),
            b_now: false,
        }
    }

    /// The same slave with fixed timing: AWREADY and WREADY always, each
    /// B `latency` cycles after the burst's last beat.
    pub fn with_fixed_latency(mut self, latency: u64) -> Self {
        self.fixed = Some(latency);
        self
    }

    /// Nothing expected, no burst open, no response owed.
    pub fn idle(&self) -> bool {
        self.exp.is_empty() && self.aw.is_empty() && self.b_owed.is_empty()
    }

    /// The golden model wrote `writes` for a packet of PDID `pdid`: they
    /// must appear on AXI4 in this order (AWUSER = `pdid`).
    pub fn expect(&mut self, writes: impl IntoIterator<Item = MemWrite>, pdid: u16) {
        self.exp.extend(writes.into_iter().map(|w| ExpBurst {
            w,
            pdid,
            kind: BurstKind::Data,
        }));
    }

    /// The golden allreduce engine wrote `writes` (PDID `pdid`): they must
    /// appear on AXI4 in this order, each as one burst, or two where it
    /// crosses a 4 KiB page; their B responses post nothing. Returns the
    /// bursts expected.
    pub fn expect_engine(
        &mut self,
        writes: impl IntoIterator<Item = MemWrite>,
        pdid: u16,
    ) -> usize {
        self.expect_parts(writes, pdid, BurstKind::Engine)
    }

    /// The golden allreduce engine took a fragment and wrote `writes` to
    /// scratch (PDID `pdid`, the fragment's): as [`Self::expect_engine`],
    /// through the receive path's write burst. Returns the bursts expected.
    pub fn expect_fragment(
        &mut self,
        writes: impl IntoIterator<Item = MemWrite>,
        pdid: u16,
    ) -> usize {
        self.expect_parts(writes, pdid, BurstKind::Fragment)
    }

    /// `writes`, each cut at 4 KiB pages, expected as bursts of `kind`.
    fn expect_parts(
        &mut self,
        writes: impl IntoIterator<Item = MemWrite>,
        pdid: u16,
        kind: BurstKind,
    ) -> usize {
        let before = self.exp.len();
        for w in writes {
            self.exp.extend(
                page_parts(w)
                    .into_iter()
                    .map(|w| ExpBurst { w, pdid, kind }),
            );
        }
        self.exp.len() - before
    }

    /// During a reset pulse: nothing valid, nothing ready.
    pub fn drive_reset(&mut self, p: &NiPorts) {
        for q in [&p.m_awready, &p.m_wready, &p.m_bvalid] {
            q.set(0);
        }
        self.awready = false;
        self.wready = false;
        self.b_now = false;
    }

    /// Clock low at time `now`: AWREADY, WREADY, and the next B when due.
    pub fn drive(&mut self, p: &NiPorts, rng: &mut Rng, now: u64) {
        self.awready = self.fixed.is_some() || rng.chance(0.6);
        self.wready = self.fixed.is_some() || rng.chance(0.7);
        p.m_awready.set(self.awready as u64);
        p.m_wready.set(self.wready as u64);
        if !self.b_now
            && self.b_owed.front().is_some_and(|&(t, _, _)| now >= t)
            && (self.fixed.is_some() || rng.chance(0.8))
        {
            self.b_now = true;
        }
        p.m_bvalid.set(self.b_now as u64);
        let resp = match self.b_owed.front() {
            Some(&(_, _, r)) if self.b_now => r,
            _ => 0,
        };
        p.m_bresp.set(resp as u64);
    }

    /// An AW accepted: the next golden write's aligned address and length,
    /// size 16, INCR, no 4 KiB crossing, AWUSER = its PDID. A W beat taken;
    /// at the last (WLAST exactly there) the strobed bytes must be
    /// contiguous and equal the golden write, which is then applied to
    /// `mem` and its B is owed at `now + 1 + rng_lat(cycle) / 2`. A B
    /// taken (BREADY while BVALID; BREADY without a B owed is allowed).
    /// Returns the bytes of a write completed this cycle, and whether a B
    /// was taken.
    pub fn check(
        &mut self,
        p: &NiPorts,
        r: Report,
        now: u64,
        mem: &mut SparseMemory,
    ) -> Result<WriteEvents, Mismatch> {
        let mut ev = WriteEvents::default();
        if p.m_awvalid.get() == 1 && self.awready {
            self.check_aw(p, r)?;
        }
        if p.m_wvalid.get() == 1 && self.wready {
            ev.written = self.check_w(p, r, now, mem)?;
        }
        if self.b_now && p.m_bready.get() == 1 {
            let (_, kind, resp) = self.b_owed.pop_front().expect("a presented B is owed");
            self.b_now = false;
            ev.bresp = resp;
            ev.landed = kind == BurstKind::Data;
            ev.engine_landed = kind == BurstKind::Engine;
            ev.fragment_landed = kind == BurstKind::Fragment;
        }
        Ok(ev)
    }

    /// An AW accepted: the shape of the next golden write not yet opened
    /// on AW, and its PDID.
    fn check_aw(&mut self, p: &NiPorts, r: Report) -> Result<(), Mismatch> {
        let addr = p.m_awaddr.get();
        let beats = p.m_awlen.get() as u32 + 1;
        let Some(ExpBurst { w, pdid, .. }) = self.exp.get(self.aw.len()) else {
            return r.bad(
                "m_awvalid",
                "0 (the golden model wrote nothing)".into(),
                format!("1 (0x{addr:x})"),
            );
        };
        let exp_beats = (w.addr % 16 + w.data.len() as u64).div_ceil(16);
        if addr != w.addr & !15
            || beats as u64 != exp_beats
            || p.m_awsize.get() != 4
            || p.m_awburst.get() != 1
            || (addr % 4096) + 16 * beats as u64 > 4096
        {
            return r.bad(
                "m_awaddr/len/size/burst",
                format!("0x{:x}/{}/4/1", w.addr & !15, exp_beats - 1),
                format!(
                    "0x{addr:x}/{}/{}/{}",
                    beats - 1,
                    p.m_awsize.get(),
                    p.m_awburst.get()
                ),
            );
        }
        if p.m_awuser.get() != *pdid as u64 {
            return r.hex("m_awuser", *pdid as u64, p.m_awuser.get());
        }
        self.aw.push_back((addr, beats));
        Ok(())
    }

    /// A W beat taken: WLAST exactly at the burst's last beat; there the
    /// burst's strobed bytes must be the oldest golden write's, which is
    /// applied to `mem` with its B owed. Returns the bytes written when the
    /// burst completed.
    fn check_w(
        &mut self,
        p: &NiPorts,
        r: Report,
        now: u64,
        mem: &mut SparseMemory,
    ) -> Result<Option<usize>, Mismatch> {
        let Some(&(addr, beats)) = self.aw.front() else {
            return r.bad("m_wvalid", "0 (no AW accepted)".into(), "1".into());
        };
        self.beats
            .push((p.m_wdata.get_u128(), p.m_wstrb.get() as u16));
        let k = self.beats.len() as u32;
        if (p.m_wlast.get() == 1) != (k == beats) {
            return r.bad(
                &format!("m_wlast (beat {} of {beats})", k - 1),
                format!("{}", k == beats),
                format!("{}", p.m_wlast.get() == 1),
            );
        }
        if k != beats {
            return Ok(None);
        }
        let ExpBurst { w, kind, .. } = self.exp.pop_front().expect("AW matched a write");
        self.aw.pop_front();
        let (first, got) = self.strobed_bytes(addr, r)?;
        if first != Some(w.addr) || got != w.data {
            return r.bad(
                "m_wdata/m_wstrb",
                format!("{} bytes at 0x{:x}: {:02x?}", w.data.len(), w.addr, w.data),
                format!(
                    "{} bytes at 0x{:x}: {:02x?}",
                    got.len(),
                    first.unwrap_or(0),
                    got
                ),
            );
        }
        mem.write(w.addr, &got);
        let lat = self.fixed.unwrap_or_else(|| rng_lat(r.cycle) / 2);
        let resp = mem.write_resp(w.addr, got.len());
        self.b_owed.push_back((now + 1 + lat, kind, resp));
        Ok(Some(got.len()))
    }

    /// The bytes the beats of the burst at `addr` strobe (taken from the
    /// beats), and the address of the first: they must be contiguous.
    fn strobed_bytes(&mut self, addr: u64, r: Report) -> Result<(Option<u64>, Vec<u8>), Mismatch> {
        let mut got = Vec::new();
        let mut first = None;
        for (j, (d, st)) in self.beats.drain(..).enumerate() {
            for (b, byte) in d.to_le_bytes().iter().enumerate() {
                if st >> b & 1 == 1 {
                    let a = addr + 16 * j as u64 + b as u64;
                    let f0 = *first.get_or_insert(a);
                    if a != f0 + got.len() as u64 {
                        return r.bad(
                            "m_wstrb",
                            "contiguous strobes".into(),
                            format!("a gap before 0x{a:x}"),
                        );
                    }
                    got.push(*byte);
                }
            }
        }
        Ok((first, got))
    }
}
