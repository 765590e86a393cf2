//! NI performance figures from the Verilated NI RTL (default point, the one
//! `exanet generate` emits for the default config):
//!
//! - latency in cycles from an accepted DOORBELL (RDMA write) and from an
//!   accepted PKT_SEND (packetizer) to the first flit out (the header);
//! - RDMA write throughput for 64 B .. 1 MiB transfers, from the accepted
//!   DOORBELL to the last flit out, in payload bytes/cycle and as link
//!   efficiency against the 256/288 packet ceiling (a 256-byte packet is
//!   16 payload flits + header + footer = 18 flits of 16 bytes).
//!
//! `cargo bench -p exanet-tb --bench ni_figures [-- --mem-latency N]`
//!
//! Agents (deterministic, no randomness):
//! - software: an AXI4-Lite master, one access at a time, valid from the
//!   first cycle, BREADY/RREADY always 1; a refused access (SLVERR) stops
//!   the run;
//! - memory: an AXI4 read slave with ARREADY always 1 and a fixed latency:
//!   the first beat of a burst is valid `mem-latency` cycles after its AR
//!   was accepted (or right after the previous burst's last beat), then
//!   one beat per cycle, no gaps;
//! - router port: every flit out is credited back in the next cycle on its
//!   VC (the request VC, or the response VC of the response lane: an
//!   always-draining router input);
//! - receive side (the last table only): a router output sending RDMA
//!   write packets (class 0) into the NI on VC 0, one flit per cycle, a
//!   packet started when the class's credit pool covers a largest packet
//!   (virtual cut-through; one pool per message class, refilled by the
//!   NI's credits on their VC's class); the memory's AXI4 write slave with
//!   AWREADY and WREADY always 1 and the B response `mem-latency` cycles
//!   after the last W beat; software polling CQ_COUNT with back-to-back
//!   reads.
//!
//! Every emitted packet is compared word for word with the golden model's
//! (`exanet_sim::ni::Ni` given the same accesses and memory: at `rsp_pick`
//! its `emit_response`, at `tx_pick` its `emit_request`, each VC's packets
//! in their pick order), so a figure
//! never comes from a run that sent the wrong packets. On the receive side
//! the golden model receives each packet at `rx_commit` and lands its write
//! at the B handshake (explicit events); every CQ_COUNT read and every
//! written byte is compared with it.
//!
//! - **last flit in → completion visible**: from the cycle the tail flit of
//!   a transfer's last packet enters the NI to the first cycle a CQ_COUNT
//!   read returns the completion (the cycle after the write's B; the poll
//!   confirms it: a read accepted at or before B returns 0, the first one
//!   after it returns 1).

use anyhow::{bail, Context, Result};
use exanet_hdl::ni::{emit_ni, rx_buffer_flits, rx_class1_flits, rx_packet_flits, NiRtlParams};
use exanet_sim::ni::memory::MemWrite;
use exanet_sim::ni::{regs, AxilResp, Ni, Packet, Prot, RxOutcome, SparseMemory};
use exanet_sim::packet::coords::Coords;
use exanet_sim::packet::footer::Footer;
use exanet_sim::packet::header::{Header, PacketType};
use exanet_tb::blocks::NiPorts;
use exanet_tb::cosim;
use exanet_tb::verilator::{BuildOptions, Port, Sim};
use std::collections::VecDeque;

/// Fixed memory read latency (AR accepted to first R beat), cycles. 24
/// cycles = 154 ns at 156.25 MHz, a DDR4 read through the ZynqMP HP port.
const DEFAULT_MEM_LATENCY: u64 = 24;
/// Source buffers live here (16-byte aligned), destinations here.
const SRC: u64 = 0x1_0000_0000;
const DST: u64 = 0x20_0000_0000;
/// Transfer sizes of the throughput table.
const SIZES: [u64; 6] = [64, 256, 1024, 4096, 64 * 1024, 1024 * 1024];
/// Give up on a transfer after this many cycles without finishing.
const TIMEOUT: u64 = 4_000_000;
/// Receive side: window 0 covers `[RX_LAND, RX_LAND + 1 MiB)` for RX_PDID;
/// the packets come from RX_SRC.
const RX_LAND: u64 = 0x30_0000_0000;
const RX_PDID: u16 = 0x2A;

/// The bench's ports beyond the shared NI set ([`NiPorts`]): clock,
/// reset, the router port's credits, and the flit input with its credits.
struct Link {
    clock: Port,
    reset: Port,
    credit_in_valid: Port,
    credit_in_vc: Port,
    in_valid: Port,
    in_data: Port,
    in_head: Port,
    in_tail: Port,
    in_vc: Port,
    credit_out_valid: Port,
    credit_out_vc: Port,
}

/// Receive-side agents and what one measured transfer saw (cycles are
/// absolute; the write and commit times are the last packet's).
#[derive(Default)]
struct Rx {
    /// Packets to send (all class 0, on VC 0), the one being sent (words,
    /// next flit); credits per message class, and each class's ring size.
    queue: VecDeque<Vec<u128>>,
    cur: Option<(Vec<u128>, usize)>,
    credits: [usize; 2],
    buffer: [usize; 2],
    /// VCs per message class (VC `v` is of class `v / vcs`).
    vcs: u64,
    /// Credits a packet needs to start (the largest packet's flits).
    pkt: usize,
    /// Sent, awaiting `rx_commit`.
    sent: VecDeque<Packet>,
    /// Golden writes expected on AXI4, W beats of the open burst, B due times.
    writes: VecDeque<MemWrite>,
    aw: VecDeque<u64>,
    beats: Vec<(u128, u16)>,
    b_due: VecDeque<u64>,
    /// Software polls CQ_COUNT; reads accepted: cycle, golden value.
    poll: bool,
    reads: VecDeque<(u64, u32)>,
    first_head: Option<u64>,
    tail: u64,
    commit: u64,
    aw_t: u64,
    wlast: u64,
    b: u64,
    /// Poll bracket: last read accepted returning 0, first returning > 0.
    last_zero: Option<u64>,
    first_seen: Option<u64>,
    /// Head flit of the RdmaCompletion out (notify).
    resp_head: Option<u64>,
}

/// One AXI4 read burst in the memory: address, beats, beats sent, first
/// beat's cycle.
struct Burst {
    addr: u64,
    beats: u64,
    done: u64,
    ready_at: u64,
}

/// What one measured operation saw (cycles are absolute).
#[derive(Default, Debug)]
struct Seen {
    /// The last access of the operation (DOORBELL / PKT_SEND) accepted.
    accepted: u64,
    /// First `tx_pick` after it.
    pick: Option<u64>,
    /// First AR accepted after it.
    ar: Option<u64>,
    /// First R beat accepted after it.
    r: Option<u64>,
    /// First head flit after it.
    head: Option<u64>,
    /// Last tail flit.
    tail: Option<u64>,
    packets: u64,
    flits: u64,
}

struct Bench {
    sim: Sim,
    p: NiPorts,
    l: Link,
    /// The request VC (lane 0) and the response VC (lane 1).
    vcs: [u64; 2],
    cycle: u64,
    mem_latency: u64,
    mem: SparseMemory,
    golden: Ni,
    // Software.
    ops: VecDeque<(u32, u32, bool)>,
    b_owed: u64,
    last_accept: u64,
    // Memory.
    bursts: VecDeque<Burst>,
    /// Window 0 set up for the receive side.
    rx_setup_done: bool,
    // Router port: the VC of the flit out in the previous cycle.
    credit_next: Option<u64>,
    // The packet being received, and the golden ones to compare with, per
    // lane (requests, responses).
    words: Vec<u128>,
    expect: [VecDeque<Vec<u128>>; 2],
    seen: Seen,
    rx: Rx,
}

impl Bench {
    fn new(params: &NiRtlParams, mem_latency: u64) -> Result<Bench> {
        let e = emit_ni(params)?;
        let sim = Sim::from_emitted(&e, &BuildOptions::default())?;
        let w = |n: &str, b: u32| sim.port_w(n, b);
        let p = NiPorts::bind(&sim, "", "out")?;
        let l = Link {
            clock: w("clock", 1)?,
            reset: w("reset", 1)?,
            credit_in_valid: w("credit_in_valid", 1)?,
            credit_in_vc: w("credit_in_vc", 4)?,
            in_valid: w("in_valid", 1)?,
            in_data: w("in_data", 128)?,
            in_head: w("in_head", 1)?,
            in_tail: w("in_tail", 1)?,
            in_vc: w("in_vc", 4)?,
            credit_out_valid: w("credit_out_valid", 1)?,
            credit_out_vc: w("credit_out_vc", 4)?,
        };
        let pay = params.ni.max_payload_bytes;
        let rings = [rx_buffer_flits(pay), rx_class1_flits(pay)];
        let rx = Rx {
            buffer: rings,
            credits: rings,
            vcs: params.vcs_per_class as u64,
            pkt: rx_packet_flits(pay),
            ..Rx::default()
        };
        let me = Coords::new(1, 2, 3, 0)?;
        w("node", 22)?.set(me.to_bits() as u64);
        // Inputs the bench never changes: no AXI4-Lite reads, nothing into
        // the receive side, the memory's write slave always ready.
        p.arvalid.set(0);
        p.bready.set(1);
        p.rready.set(1);
        p.m_arready.set(1);
        for (n, b, v) in [
            ("in_valid", 1, 0),
            ("m_awready", 1, 1),
            ("m_wready", 1, 1),
            ("m_bvalid", 1, 0),
        ] {
            w(n, b)?.set(v);
        }
        // Source bytes: a pattern no two nearby 16-byte words share.
        let mut mem = SparseMemory::new();
        let span = *SIZES.iter().max().expect("sizes") + 4096;
        let bytes: Vec<u8> = (0..span)
            .map(|i| (i.wrapping_mul(0x9E37_79B9) >> 7) as u8 ^ (i >> 12) as u8)
            .collect();
        mem.write(SRC, &bytes);
        let mut golden = Ni::new(&params.ni, me)?;
        *golden.mem_mut() = mem.clone();
        let mut b = Bench {
            sim,
            p,
            vcs: [params.vc as u64, params.resp_vc as u64],
            cycle: 0,
            mem_latency,
            mem,
            golden,
            ops: VecDeque::new(),
            b_owed: 0,
            last_accept: 0,
            bursts: VecDeque::new(),
            rx_setup_done: false,
            credit_next: None,
            words: Vec::new(),
            expect: Default::default(),
            seen: Seen::default(),
            l,
            rx,
        };
        b.l.reset.set(1);
        b.step()?;
        b.step()?;
        b.l.reset.set(0);
        Ok(b)
    }

    /// One clock cycle: drive, eval, observe every handshake, rising edge.
    fn step(&mut self) -> Result<()> {
        let p = &self.p;
        let t = self.cycle;
        self.l.clock.set(0);
        // Software: the head access, valid until accepted.
        match self.ops.front() {
            Some(&(addr, data, prot)) => {
                p.awvalid.set(1);
                p.wvalid.set(1);
                p.awaddr.set(addr as u64);
                p.wdata.set(data as u64);
                p.awprot.set(prot as u64);
            }
            None => {
                p.awvalid.set(0);
                p.wvalid.set(0);
            }
        }
        // Memory: the head burst's next beat once its latency has passed.
        let beat = match self.bursts.front().filter(|b| t >= b.ready_at) {
            Some(b) => {
                let mut w = [0u8; 16];
                self.mem.read_into(b.addr + 16 * b.done, &mut w);
                p.m_rdata.set_u128(u128::from_le_bytes(w));
                p.m_rvalid.set(1);
                true
            }
            None => {
                p.m_rvalid.set(0);
                false
            }
        };
        // Router port: credit for the flit of the previous cycle, on its VC.
        self.l
            .credit_in_valid
            .set(self.credit_next.is_some() as u64);
        self.l.credit_in_vc.set(self.credit_next.unwrap_or(0));
        self.rx_drive(t);
        self.sim.eval();
        let p = &self.p;

        // Handshakes of this cycle.
        if p.awvalid.get() == 1 && p.awready.get() == 1 {
            let (addr, data, prot) = self.ops.pop_front().expect("presented access");
            let pr = if prot { Prot::Privileged } else { Prot::User };
            let want = self.golden.axil_write_prot(addr, data, pr);
            if want != AxilResp::Okay {
                bail!("cycle {t}: the golden model refuses the write of {data:#x} to {addr:#x}: {want:?}");
            }
            self.b_owed += 1;
            self.last_accept = t;
        }
        if p.bvalid.get() == 1 {
            if p.bresp.get() != 0 {
                bail!("cycle {t}: an AXI4-Lite write answered SLVERR");
            }
            self.b_owed -= 1;
        }
        if p.m_arvalid.get() == 1 {
            let beats = p.m_arlen.get() + 1;
            let ready_at =
                (t + self.mem_latency).max(self.bursts.back().map_or(0, |b| b.ready_at + b.beats));
            self.bursts.push_back(Burst {
                addr: p.m_araddr.get(),
                beats,
                done: 0,
                ready_at,
            });
            self.seen.ar.get_or_insert(t);
        }
        if beat && p.m_rready.get() == 1 {
            self.seen.r.get_or_insert(t);
            let b = self.bursts.front_mut().expect("beat of a burst");
            b.done += 1;
            if b.done == b.beats {
                self.bursts.pop_front();
            }
        }
        // Picks, in the golden order: the response lane's, then the
        // scheduler's.
        if p.rsp_pick.get() == 1 {
            let pk = self.golden.emit_response().with_context(|| {
                format!("cycle {t}: rsp_pick but the golden model has no response")
            })?;
            self.expect[1].push_back(pk.words);
        }
        if p.tx_pick.get() == 1 {
            self.seen.pick.get_or_insert(t);
            let pk = self.golden.emit_request().with_context(|| {
                format!("cycle {t}: tx_pick but the golden model has no request")
            })?;
            self.expect[0].push_back(pk.words);
        }
        self.credit_next = (p.out_valid.get() == 1).then(|| p.out_vc.get());
        if let Some(vc) = self.credit_next {
            let lane =
                self.vcs.iter().position(|&v| v == vc).with_context(|| {
                    format!("cycle {t}: a flit out on VC {vc}, not {:?}", self.vcs)
                })?;
            if p.out_head.get() == 1 {
                self.seen.head.get_or_insert(t);
                self.words.clear();
            }
            self.words.push(p.out_data.get_u128());
            self.seen.flits += 1;
            if p.out_tail.get() == 1 {
                self.seen.tail = Some(t);
                self.seen.packets += 1;
                let want = self.expect[lane].pop_front().with_context(|| {
                    format!(
                        "cycle {t}: a packet out on VC {vc} with no golden packet picked for it"
                    )
                })?;
                if want != self.words {
                    bail!(
                        "cycle {t}: packet {} differs from the golden model's",
                        self.seen.packets
                    );
                }
            }
        }
        self.rx_observe(t)?;
        self.l.clock.set(1);
        self.sim.eval();
        self.cycle += 1;
        Ok(())
    }

    /// Receive side, clock low: the next flit in, a CQ_COUNT poll when no
    /// write is presented, BVALID when due.
    fn rx_drive(&mut self, t: u64) {
        let (p, q, rx) = (&self.p, &self.l, &mut self.rx);
        if rx.cur.is_none() && rx.credits[0] >= rx.pkt {
            rx.cur = rx.queue.pop_front().map(|w| (w, 0));
        }
        match &rx.cur {
            Some((w, i)) => {
                q.in_valid.set(1);
                q.in_vc.set(0);
                q.in_data.set_u128(w[*i]);
                q.in_head.set((*i == 0) as u64);
                q.in_tail.set((*i + 1 == w.len()) as u64);
            }
            None => q.in_valid.set(0),
        }
        let read = rx.poll && self.ops.is_empty() && rx.reads.is_empty();
        self.p.arvalid.set(read as u64);
        p.araddr.set((regs::CQ_PAGE + regs::CQ_COUNT) as u64);
        p.arprot.set(0);
        p.m_bvalid
            .set(rx.b_due.front().is_some_and(|&d| t >= d) as u64);
    }

    /// Receive side, after evaluation: reads, flits in, credits back, the
    /// decision (golden receive), AW / W (against the golden write), B
    /// (golden write landed). A write accepted in the cycle of a B is
    /// refused (the golden order would matter; this bench never does it).
    fn rx_observe(&mut self, t: u64) -> Result<()> {
        let (p, q) = (&self.p, &self.l);
        let rx = &mut self.rx;
        if p.arvalid.get() == 1 && p.arready.get() == 1 {
            let v = self.golden.axil_read(regs::CQ_PAGE + regs::CQ_COUNT);
            rx.reads.push_back((t, v));
        }
        if p.rvalid.get() == 1 {
            let (at, v) = rx.reads.pop_front().context("s_rvalid with no read")?;
            if p.rdata.get() != v as u64 {
                bail!(
                    "cycle {t}: CQ_COUNT read (accepted at {at}) = {}, golden {v}",
                    p.rdata.get()
                );
            }
            if v == 0 {
                rx.last_zero = Some(at);
            } else {
                rx.first_seen.get_or_insert(at);
            }
        }
        if let Some((w, i)) = &mut rx.cur {
            // Flit taken (the NI has the credits: nothing to wait for).
            rx.credits[0] -= 1;
            if *i == 0 {
                rx.first_head.get_or_insert(t);
            }
            *i += 1;
            if *i == w.len() {
                rx.tail = t;
                let (w, _) = rx.cur.take().expect("sending");
                rx.sent.push_back(Packet { words: w });
            }
        }
        if q.credit_out_valid.get() == 1 {
            let v = q.credit_out_vc.get();
            let c = (v / rx.vcs) as usize;
            if c > 1 || rx.credits[c] >= rx.buffer[c] {
                bail!("cycle {t}: a credit on VC {v} the NI does not owe");
            }
            rx.credits[c] += 1;
        }
        if p.rx_commit.get() == 1 {
            let pk = rx
                .sent
                .pop_front()
                .context("rx_commit with no packet sent")?;
            let o = self.golden.receive_packet(&pk);
            if o != RxOutcome::Accepted {
                bail!("cycle {t}: golden outcome {o:?} for a packet the RTL took");
            }
            rx.writes.extend(self.golden.take_writes());
            rx.commit = t;
        }
        if p.m_awvalid.get() == 1 {
            rx.aw.push_back(p.m_awaddr.get());
            rx.aw_t = t;
        }
        if p.m_wvalid.get() == 1 {
            rx.beats
                .push((p.m_wdata.get_u128(), p.m_wstrb.get() as u16));
            if p.m_wlast.get() == 1 {
                let addr = rx.aw.pop_front().context("W before AW")?;
                let w = rx
                    .writes
                    .pop_front()
                    .context("a write the golden model did not make")?;
                let mut got = Vec::new();
                for (j, (d, st)) in rx.beats.drain(..).enumerate() {
                    for (b, byte) in d.to_le_bytes().iter().enumerate() {
                        if st >> b & 1 == 1 {
                            if got.is_empty() && addr + 16 * j as u64 + b as u64 != w.addr {
                                bail!("cycle {t}: write starts at the wrong byte");
                            }
                            got.push(*byte);
                        }
                    }
                }
                if got != w.data {
                    bail!("cycle {t}: written bytes differ from the golden write");
                }
                rx.wlast = t;
                rx.b_due.push_back(t + self.mem_latency.max(1));
            }
        }
        if p.m_bvalid.get() == 1 && p.m_bready.get() == 1 {
            rx.b_due.pop_front();
            if self.p.awvalid.get() == 1 && self.p.awready.get() == 1 {
                bail!("cycle {t}: an AXI4-Lite write accepted in the cycle of a B");
            }
            self.golden.write_landed()?;
            rx.b = t;
        }
        if rx.poll
            && self.p.out_valid.get() == 1
            && self.p.out_head.get() == 1
            && self.p.out_vc.get() == self.vcs[1]
        {
            rx.resp_head.get_or_insert(t);
        }
        Ok(())
    }

    /// Send one RDMA write of `len` bytes (aligned, packets of up to P
    /// bytes) into the NI, `notify` on its last packet; poll CQ_COUNT until
    /// the completion is visible, then pop it. Returns what it saw.
    fn rx_transfer(&mut self, len: u64, notify: bool, pay: u64, txid: u16) -> Result<Rx> {
        if !self.rx_setup_done {
            self.rx_setup_done = true;
            self.golden.set_explicit_events(true);
            self.golden.set_write_log(true);
            let wn = |f| regs::win_reg(0, f);
            for (a, v) in [
                (wn(regs::WIN_BASE_LO), RX_LAND as u32),
                (wn(regs::WIN_BASE_HI), (RX_LAND >> 32) as u32),
                (wn(regs::WIN_SIZE_LO), 1 << 20),
                (wn(regs::WIN_SIZE_HI), 0),
                (wn(regs::WIN_CTRL), RX_PDID as u32 | 1 << 31),
            ] {
                self.ops.push_back((a, v, true));
            }
        }
        while !self.ops.is_empty() || self.b_owed > 0 {
            self.step()?;
        }
        for _ in 0..4 {
            self.step()?;
        }
        let me = self.golden.me();
        let src = Coords::new(4, 4, 1, 0)?;
        let packets = len.div_ceil(pay);
        for k in 0..packets {
            let n = pay.min(len - k * pay);
            let mut h = Header::new(PacketType::RdmaWrite, me);
            h.set_vaddr(RX_LAND + k * pay)?.set_pdid(RX_PDID)?;
            let mut f = Footer::new(src);
            f.set_first(k == 0)
                .set_last(k + 1 == packets)
                .set_notify(notify && k + 1 == packets);
            f.set_seq(k as u16)?.set_txid(txid)?;
            let payload: Vec<u8> = (0..n).map(|i| (i * 7 + k) as u8).collect();
            self.rx.queue.push_back(Packet::build(h, f, &payload).words);
        }
        self.rx.poll = true;
        let start = self.cycle;
        loop {
            self.step()?;
            let rx = &self.rx;
            let done = rx.queue.is_empty()
                && rx.cur.is_none()
                && rx.sent.is_empty()
                && rx.b_due.is_empty()
                && rx.first_seen.is_some()
                && rx.reads.is_empty()
                && rx.credits == rx.buffer
                && self.idle();
            if done {
                break;
            }
            if self.cycle - start > TIMEOUT {
                bail!("the receive side did not finish within {TIMEOUT} cycles");
            }
        }
        self.rx.poll = false;
        self.ops.push_back((regs::CQ_PAGE + regs::CQ_POP, 0, false));
        while !self.ops.is_empty() || self.b_owed > 0 {
            self.step()?;
        }
        let seen = Rx {
            buffer: self.rx.buffer,
            credits: self.rx.buffer,
            vcs: self.rx.vcs,
            pkt: self.rx.pkt,
            ..Rx::default()
        };
        let r = std::mem::replace(&mut self.rx, seen);
        // The poll brackets the instant: 0 up to B, the entry after it.
        match (r.last_zero, r.first_seen) {
            (Some(z), Some(s)) if z <= r.b && s > r.b => Ok(r),
            (z, s) => bail!(
                "{len} B: completion visibility: last read of 0 accepted at {z:?}, first non-zero at {s:?}, B at {}",
                r.b
            ),
        }
    }

    fn idle(&self) -> bool {
        self.ops.is_empty()
            && self.b_owed == 0
            && self.bursts.is_empty()
            && self.expect.iter().all(|e| e.is_empty())
            && self.p.tx_busy.get() == 0
            && !self.golden.has_packet()
            && self.credit_next.is_none()
    }

    /// Queue `accesses` (user accesses to channel 0), run until the NI is
    /// idle again, and report what the last access started.
    fn run(&mut self, accesses: &[(u32, u32)]) -> Result<Seen> {
        // Settle first: the measurement starts from an idle NI.
        for _ in 0..4 {
            self.step()?;
        }
        let page = regs::ch_page(0);
        let (last, setup) = accesses.split_last().context("no access to measure")?;
        // The set-up accesses (staging registers, message window) first.
        for &(off, v) in setup {
            self.ops.push_back((page + off, v, false));
        }
        while !self.ops.is_empty() || self.b_owed > 0 {
            self.step()?;
        }
        // Then the measured one, and everything it starts.
        self.seen = Seen::default();
        self.ops.push_back((page + last.0, last.1, false));
        let start = self.cycle;
        while !self.idle() {
            self.step()?;
            if self.cycle - start > TIMEOUT {
                bail!("the NI did not finish within {TIMEOUT} cycles");
            }
        }
        self.seen.accepted = self.last_accept;
        Ok(std::mem::take(&mut self.seen))
    }

    /// An RDMA write of `len` bytes from `SRC + src_off` to `DST`.
    fn rdma_write(&mut self, len: u64, src_off: u64) -> Result<Seen> {
        let l = SRC + src_off;
        let dest = Coords::new(5, 0, 1, 0)?.to_bits();
        self.run(&[
            (regs::DESC_LADDR_LO, l as u32),
            (regs::DESC_LADDR_HI, (l >> 32) as u32),
            (regs::DESC_RADDR_LO, DST as u32),
            (regs::DESC_RADDR_HI, (DST >> 32) as u32),
            (regs::DESC_LEN, len as u32),
            (regs::DESC_DEST, dest),
            (regs::DESC_CTRL, 7 << 16), // op 0 (write), no notify, txid 7
            (regs::DOORBELL, 1),
        ])
    }

    /// A packetizer message of `len` bytes (window already filled).
    fn pkt_send(&mut self, len: u32) -> Result<Seen> {
        let mut acc: Vec<(u32, u32)> = (0..len.div_ceil(4))
            .map(|i| (regs::PKT_DATA + 4 * i, 0xA5A5_0000 | i))
            .collect();
        acc.push((regs::PKT_DEST, Coords::new(2, 3, 0, 0)?.to_bits()));
        acc.push((regs::PKT_SEND, len));
        self.run(&acc)
    }
}

/// Flits of an aligned transfer of `len` bytes with payload `p` per packet.
fn flits_of(len: u64, p: u64) -> (u64, u64) {
    let packets = len.div_ceil(p);
    let full = len / p;
    let rest = len % p;
    let flits = full * (2 + p / 16) + if rest > 0 { 2 + rest.div_ceil(16) } else { 0 };
    (packets, flits)
}

fn main() -> Result<()> {
    if let Some(r) = cosim::verilator_missing_reason() {
        println!("{r}");
        return Ok(());
    }
    let mut mem_latency = DEFAULT_MEM_LATENCY;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--mem-latency" {
            let v = args.next().unwrap_or_default();
            mem_latency = v
                .parse()
                .map_err(|_| anyhow::anyhow!("--mem-latency `{v}`: not a cycle count"))?;
        }
    }
    let params = NiRtlParams::default();
    let pay = params.ni.max_payload_bytes as u64;
    println!(
        "NI RTL {} ({}), memory latency {mem_latency} cycles (AR accepted to first R beat, \
         then one beat per cycle), credits returned the cycle after each flit",
        exanet_hdl::ni::ni_top_name(&params),
        exanet_tb::blocks::ni::point_text(&params)
    );
    let mut b = Bench::new(&params, mem_latency)?;

    println!("\n## Latency to the first flit out (header), cycles");
    println!(
        "| operation | accepted -> tx_pick | -> first AR | -> first R beat | -> header flit |"
    );
    println!("|---|---|---|---|---|");
    let rel =
        |s: &Seen, v: Option<u64>| v.map_or("-".to_string(), |c| (c - s.accepted).to_string());
    for len in [64u64, 4096] {
        let s = b.rdma_write(len, 0)?;
        println!(
            "| RDMA write {len} B, DOORBELL | {} | {} | {} | {} |",
            rel(&s, s.pick),
            rel(&s, s.ar),
            rel(&s, s.r),
            rel(&s, s.head)
        );
    }
    let s = b.pkt_send(64)?;
    println!(
        "| packetizer 64 B, PKT_SEND | {} | {} | {} | {} |",
        rel(&s, s.pick),
        rel(&s, s.ar),
        rel(&s, s.r),
        rel(&s, s.head)
    );

    let ceiling = pay as f64 / (pay as f64 + 32.0); // 256/288
    for src_off in [0u64, 4] {
        println!(
            "\n## RDMA write throughput, source {} (destination aligned), DOORBELL accepted to last flit out",
            if src_off == 0 { "16-byte aligned".to_string() } else { format!("misaligned by {src_off} B") }
        );
        println!("| bytes | packets | flits | cycles | payload B/cycle | link use (flits/cycle) | efficiency vs {pay}/{} ceiling |", pay + 32);
        println!("|---|---|---|---|---|---|---|");
        for len in SIZES {
            let s = b.rdma_write(len, src_off)?;
            let (packets, flits) = flits_of(len, pay);
            if s.packets != packets || s.flits != flits {
                bail!(
                    "{len} B: {} packets / {} flits out, expected {packets} / {flits}",
                    s.packets,
                    s.flits
                );
            }
            let cycles = s.tail.expect("a tail flit") - s.accepted;
            let bpc = len as f64 / cycles as f64;
            println!(
                "| {len} | {packets} | {flits} | {cycles} | {bpc:.2} | {:.3} | {:.1} % |",
                flits as f64 / cycles as f64,
                100.0 * bpc / 16.0 / ceiling
            );
        }
    }
    println!(
        "\n## Receive: last flit in -> completion visible, cycles (B response {mem_latency} cycles after the last W beat)"
    );
    println!("| transfer | packets | tail in -> rx_commit | -> AW | -> last W | -> B | -> **completion visible** (B + 1) | first head in -> visible | RdmaCompletion header out |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (k, (len, notify)) in [
        (16u64, false),
        (64, false),
        (256, false),
        (4096, false),
        (64, true),
    ]
    .into_iter()
    .enumerate()
    {
        let r = b.rx_transfer(len, notify, pay, 100 + k as u16)?;
        let d = |x: u64| x - r.tail;
        let head = r.first_head.context("a head flit in")?;
        println!(
            "| RDMA write {len} B{} | {} | {} | {} | {} | {} | **{}** | {} | {} |",
            if notify { ", notify" } else { "" },
            len.div_ceil(pay),
            d(r.commit),
            d(r.aw_t),
            d(r.wlast),
            d(r.b),
            d(r.b + 1),
            r.b + 1 - head,
            r.resp_head.map_or("-".to_string(), |h| d(h).to_string()),
        );
    }
    println!(
        "\n## Receive throughput: RDMA write packets into the NI back to back (one flit per cycle when credits allow), first head flit in -> completion visible"
    );
    println!("| bytes | packets | flits | cycles | payload B/cycle | link use (flits/cycle) | efficiency vs {pay}/{} ceiling |", pay + 32);
    println!("|---|---|---|---|---|---|---|");
    for (k, len) in [256u64, 4096, 64 * 1024, 1024 * 1024]
        .into_iter()
        .enumerate()
    {
        let r = b.rx_transfer(len, false, pay, 200 + k as u16)?;
        let head = r.first_head.context("a head flit in")?;
        let cycles = r.b + 1 - head;
        let (packets, flits) = flits_of(len, pay);
        let bpc = len as f64 / cycles as f64;
        println!(
            "| {len} | {packets} | {flits} | {cycles} | {bpc:.2} | {:.3} | {:.1} % |",
            flits as f64 / cycles as f64,
            100.0 * bpc / 16.0 / ceiling
        );
    }
    println!(
        "\nResources: `exanet generate --out out && exanet synth --out out --block ni` (default config)."
    );
    Ok(())
}
