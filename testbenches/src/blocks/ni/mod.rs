//! Co-simulation bench of `ni` (transmit side with the response queue and
//! the read-serve engine; receive path: checks, reject path, data writes,
//! completions, the damaged-transfer table, STATUS, mailbox,
//! acknowledgements, read requests, `Busy`): RTL vs `exanet_sim::ni::Ni`,
//! transaction by transaction.
//!
//! Agents, all random (seeded):
//! - **Software** (AXI4-Lite master): at each phase start, privileged
//!   set-up (channel PDIDs, windows, MBOX_CTRL, CONTROL); then random mixes
//!   of RDMA write and read descriptors (staging writes + DOORBELL; lengths
//!   0..20000, any alignment, a few refused: bad op, length 0, address
//!   beyond the limit, queue full), packetizer sends (window words,
//!   PKT_DEST, PKT_SEND with good and bad lengths, slots running out),
//!   TX_ENABLE toggles, PDID and MBOX_CTRL changes, reads of every
//!   register (STATUS, counters, error queue, CQ and mailbox pages
//!   included), consumption of the head completion (CQ_W0..W2, CQ_POP,
//!   STATUS read and W1C) or message (MB_COUNT/LEN/SRC/PDID, MB_DATA, MB_POP),
//!   error-queue pops, and bad accesses (user access to page 0, user write
//!   to CH_PDID, writes to read-only CQ / mailbox registers, unaligned,
//!   unmapped). When the receive path stays `Busy`, software pops the
//!   completion queue and the mailbox. Valid/ready delays are random on
//!   every channel.
//! - **Memory** (AXI4 slave): accepts AR with random backpressure, returns
//!   each burst after a random latency with random gaps between beats,
//!   from a sparse memory holding the same bytes as the golden model's;
//!   with [`NiBench::set_axi_faults`] (off by default) a random fraction
//!   of its 16-byte lines answers SLVERR / DECERR (RRESP with random data
//!   on reads, BRESP on writes touching them), the same fault map as the
//!   golden model's memory, so stomped packets, MEM_ERROR completions,
//!   the error counters and STATUS.AXI_ERROR are compared like the rest.
//! - **Router port**: returns credits after random delays, on the request
//!   VC `vc` and the response VC `resp_vc` (and stray credits on other
//!   VCs, which the NI must ignore).
//! - **Receive agent** (a router local output): sends packets into the NI
//!   (flits with random gaps, one packet at a time; one credit pool per
//!   message class, the size of that class's receive ring; a packet of
//!   class `c` starts only with credits for a largest packet in pool `c`,
//!   virtual cut-through; a random VC of the class of its type, VC `v`
//!   being of class `v / vcs_per_class`; a few damaged ones on a VC of the
//!   other class, rejected WrongClass): RdmaWrite / RdmaReadResp into the landing
//!   area's first half (window 0; `first`, `last`, `notify` random; (src,
//!   txid) mostly from a small pool so damaged transfers complete as
//!   PACKET_REJECTED), RdmaReadReq asking for 1..12·P bytes of the landing
//!   area's second half (random bytes no packet writes, so the RTL's
//!   delayed memory reads see the golden model's bytes; refused ones: a
//!   forged PDID, outside window 0, running past its end or past
//!   `2^addr_bits`, malformed payload or flags),
//!   Mailbox messages from four senders (mostly with the MBOX_CTRL PDID),
//!   MailboxAck / MailboxNack (full, payload CRC, other reasons) for the
//!   NI's own messages seen leaving (after their tail flit) (and stale ones: wrong source, PDID or
//!   slot; and, for every second message picked, a forged one sent as soon
//!   as the port is free while the message is still being sent, which is
//!   `Stale` when decided before its tail leaves),
//!   RdmaCompletion and Nack packets; each good or damaged one way —
//!   forged PDID, outside the window, beyond `2^addr_bits`, crossing a P
//!   boundary, misrouted, size 0, Ack type, unknown type, payload bit flip,
//!   single (corrected) and double header errors, footer bit flip, a word
//!   dropped or added, header only. The memory's AXI4 write slave has
//!   random AW/W backpressure and B latency. When a completion's write is
//!   on its way, software often polls CQ_COUNT / CQ_W0.
//! - **Many-to-one burst** ([`NiBench::set_mailbox_burst`]): instead, only
//!   mailbox messages from several senders (two in flight each, each
//!   message resent when answered MailboxNack), software reading each
//!   message's id and popping it, slowly; delivery is counted in
//!   [`NiCoverage`].
//!
//! Checks (the first failure stops the run): every AXI4-Lite response
//! (OKAY/SLVERR and read data) against the golden model's for the same
//! access in the same order; at `rsp_pick` the golden model must have a
//! response (`emit_response`), at `tx_pick` a request (`emit_request`),
//! and when the RTL's engine is idle and not picking it must have no
//! request; every flit against the golden packet's words (data, head,
//! tail), per VC: requests on `vc` in their pick order, responses on
//! `resp_vc` in theirs, no packet's flits interleaved with another's of its VC (a
//! response may come between two flits of a class-0 packet); no
//! flit without a credit of its VC; every
//! AR: 16-byte aligned, INCR, size 16, no 4 KiB crossing, address below
//! `2^addr_bits`, ARUSER = the packet's PDID. At `rx_commit` the golden
//! model receives (`receive_packet_on`, class `rx_class`) the oldest
//! packet sent on a VC of class `rx_class` (it must be consumed, not
//! Busy); at `rx_busy` it must answer `Busy` for that packet (asked again
//! whenever its state changed since); its memory writes (`take_writes`) must then appear on
//! AXI4 in order, one burst each: AW aligned, length, size 16, INCR,
//! AWUSER = the packet's PDID, no 4 KiB crossing; the strobed bytes
//! exactly the written range and data. Any AW with no golden write pending
//! (e.g. from a rejected packet) fails. At each B handshake the golden
//! model's oldest write lands (`write_landed`: the completion and notify
//! response are posted then, so a CQ read or a pick that shows one before
//! the B is a mismatch); at each tail flit out the packet has left
//! (`packet_left`; explicit events, see `exanet_sim::ni`). Credits return
//! on the packet's VC, as many as its flits, none unowed, each class's in
//! the order of its decisions. Order of golden calls within a cycle: read
//! accepted, response picked, request picked, receive, write landed, write
//! accepted, packet left.
//!
//! Phases end with a drain (no new accesses or packets until both sides
//! are idle; meanwhile the receive agent acknowledges every message of the
//! NI still awaiting an acknowledgement); every second phase ends with a
//! reset pulse, the others go on with the same state. Before such a reset
//! software fills the registers it can write with random values (every
//! window but window 0 enabled), and right after it reads them back with
//! the rest of the configuration, each read compared with a fresh golden
//! model's (`software::queue_reset_readback`). Single header errors walk
//! over all 128 header bits, and a third of the other packets get one more
//! walked upset on top (each must be corrected).
//!
//! **Engine points** (`ni.ar_communicators > 0`, `exanet cosim allreduce`,
//! [`allreduce_info`]): the allreduce stimulus joins (`allreduce`), and
//! the header walk and the reset fill and read-back are off unless the
//! point asks for them ([`ArStimulus`]: `header_walk=1`, then seven in
//! ten of the other packets get a walked upset; `reset_readback=1`, then the first
//! phase and every second after it end with a reset), because the
//! `allreduce_*` tests' fixed-seed coverage floors were measured without
//! them. The `allreduce` matrix's first point has both on.
//!
//! **Event trace** (`ni.trace_depth > 0`, `exanet_sim::ni::trace`): each
//! phase's set-up writes TRACE_CTRL (mostly enable, sometimes enable and
//! clear, sometimes off); the golden model's trace time is set every
//! cycle (cycles since the last reset, as the RTL's counter). At the end
//! of the drain software reads TRACE_CTRL, TRACE_DEPTH, TRACE_COUNT,
//! TRACE_DROPS and every entry the ring holds (TRACE_IDX, TRACE_LO,
//! TRACE_HI), each read compared with the golden model's like any other:
//! the first entry that differs (event, order, cycle, fields) fails.
//! Software pops the mailbox with the trace on, so MBOX_POP entries are
//! among those compared (counted in the coverage by event code).

pub(crate) mod agents;
mod allreduce;
mod burst;
mod check;
mod coverage;
mod drive;
mod points;
mod rx;
mod rx_packet;
mod software;

pub use coverage::NiCoverage;
pub use points::{
    allreduce_info, allreduce_points, info, matrix_points, parse_allreduce_point, parse_point,
    point_text, ArStimulus,
};

use crate::cosim::{Bench, Mismatch};
use crate::verilator::{Port, Sim};
use agents::{AxiReadSlave, AxilMaster, NiPorts, TxFlits};
use anyhow::Result;
use burst::MbBurst;
use exanet_hdl::emit::Emitted;
use exanet_hdl::ni::{emit_ni, rx_buffer_flits, rx_class1_flits, rx_packet_flits, NiRtlParams};
use exanet_sim::ni::{Ni, NiParams, SparseMemory};
use exanet_sim::packet::coords::Coords;
use exanet_sim::rng::Rng;
use rx::Rx;
use std::collections::VecDeque;

/// One step of the software's queue: an AXI4-Lite access, or a wait of
/// that many cycles.
#[derive(Clone, Copy, Debug)]
enum Op {
    Write { addr: u32, data: u32, prot: bool },
    Read { addr: u32, prot: bool },
    Wait(u32),
}

/// The NI's ports: the ones the shared agents drive, and the router
/// port's (credits in, flits in, credits out) and the reset.
#[derive(Clone)]
struct Ports {
    ni: NiPorts,
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

/// Memory regions the software's sources lie in (filled with random bytes).
const REGION: u64 = 64 * 1024;

/// The `ni` bench at one parameter point.
pub struct NiBench {
    params: NiRtlParams,
    golden_params: NiParams,
    me: Coords,
    golden: Ni,
    /// The memory the RTL's AXI master reads (same bytes as the golden's).
    mem: SparseMemory,
    regions: Vec<u64>,
    ports: Option<Ports>,
    // Software.
    sw: VecDeque<Op>,
    axil: AxilMaster<()>,
    wait: u32,
    tx_off: bool,
    // Memory.
    mem_r: AxiReadSlave,
    // Flits: the packets picked; the flits the router holds (credits
    // used) on `vc` and `resp_vc`; the lane (0 `vc`, 1 `resp_vc`) a credit
    // is returned to this cycle.
    tx: TxFlits,
    held: [usize; 2],
    credit_now: Option<usize>,
    // Phases.
    cycle_in_phase: u64,
    phase_len: u64,
    draining: bool,
    reset_now: bool,
    load: f64,
    idle_run: u64,
    cov: NiCoverage,
    rx: Rx,
    /// Inject only packets the receive path must reject, and leave the
    /// windows as set up (for the zero-bytes-written test).
    only_bad: bool,
    /// IRQ_ENABLE at set-up and after every software change of it
    /// (`None`: random, [`NiBench::set_irq_enable`]).
    irq_enable: Option<u32>,
    /// Many-to-one mailbox burst mode.
    burst: Option<MbBurst>,
    /// The golden model changed since the last `Busy` confirmation.
    golden_dirty: bool,
    /// An allreduce copy on AXI4 (its golden writes done at the DOORBELL):
    /// its PDID (ARUSER, AWUSER) and the bursts whose B is still due.
    ar_copy: Option<(u16, usize)>,
    /// `ar_copy` is a collective's step (its reads may follow transmit
    /// reads of the packets picked before it).
    ar_step: bool,
    /// A collective ended OK in the golden model at this phase cycle with
    /// this AR_TIMEOUT, its last step's bursts still due on AXI4.
    ar_ok_at: Option<(u64, u32)>,
    /// Good single-rank allreduce descriptors in the stimulus
    /// ([`NiBench::set_ar_copies`]), and good ones on slot 0 (collectives
    /// of two ranks or more: fragments sent, then TIMEOUT).
    ar_copies: bool,
    /// The action being generated posts a good collective descriptor.
    ar_collective: bool,
    /// The allreduce bench's own stimulus keys ([`ArStimulus`]): the
    /// header walk and the read-back after resets at an engine point.
    ar_stim: ArStimulus,
    /// The partners' fragments of slot 0's running collective (its
    /// communicator and sequence number, and the fragments not yet sent
    /// in: `NiBench::ar_fragment`).
    ar_partner: Option<allreduce::Partner>,
    /// Phases ended (every second ends with a reset pulse).
    phases: u64,
    /// Cycles since the end of the last reset: the golden model's trace
    /// time ([`Ni::set_cycle`]), as the RTL's counter.
    trace_t: u64,
    /// This phase's trace ring has been queued for reading.
    trace_read: bool,
    /// This phase ends with a reset pulse and its registers have been
    /// filled for the read-back after it.
    reset_fill: bool,
    /// AXI4 error injection ([`NiBench::set_axi_faults`]): seed, and one
    /// faulty 16-byte line in this many.
    axi_faults: Option<(u64, u64)>,
    /// The error counter the next substituted read reads (`software`).
    axi_cnt_turn: usize,
}

/// A REGION-aligned base with two free REGIONs (no source region there).
fn landing_base(regions: &[u64], lim: u64) -> u64 {
    (1..lim / REGION - 2)
        .map(|k| k * REGION)
        .find(|&b| {
            regions
                .iter()
                .all(|&r| r + REGION <= b || r >= b + 2 * REGION)
        })
        .expect("the address space has room for the landing area")
}

/// One REGION of random bytes at `base`.
fn fill(mem: &mut SparseMemory, base: u64, rng: &mut Rng) {
    let mut buf = vec![0u8; REGION as usize];
    for chunk in buf.chunks_mut(8) {
        let v = rng.next_u64().to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
    mem.write(base, &buf);
}

impl NiBench {
    /// A bench of `params` (validated; the RTL must support it).
    pub fn new(params: NiRtlParams) -> Result<Self> {
        let g = params.ni.clone();
        Self::with_golden(params, g)
    }

    /// A bench whose golden model has other parameters than the RTL: only
    /// for showing that the bench catches a wrong model.
    pub fn with_golden(params: NiRtlParams, golden_params: NiParams) -> Result<Self> {
        // With `ni.ar_communicators > 0`: the engine, and its stimulus
        // (`allreduce`).
        exanet_hdl::ni::Geometry::new(&params)?;
        let me = Coords::new(3, 1, 2, 1)?;
        let mut rng = Rng::new(0xE1A5);
        let lim = 1u64 << params.ni.addr_bits;
        let mut regions: Vec<u64> = (0..3)
            .map(|_| rng.below(lim / REGION - 2) * REGION)
            .collect();
        regions.push(lim - REGION);
        let mut mem = SparseMemory::new();
        for &b in &regions {
            fill(&mut mem, b, &mut rng);
        }
        // The landing area holds random bytes too: read requests are
        // served from its second half, which no data packet writes.
        let land = landing_base(&regions, lim);
        fill(&mut mem, land, &mut rng);
        let mut golden = Ni::new(&golden_params, me)?;
        *golden.mem_mut() = mem.clone();
        golden.set_write_log(true);
        golden.set_explicit_events(true);
        let params_p = params.ni.max_payload_bytes;
        let tx = TxFlits::new(params.vc as u64, params.resp_vc as u64);
        let vcs = params.vcs_per_class;
        Ok(NiBench {
            params,
            golden_params,
            me,
            golden,
            mem,
            regions,
            ports: None,
            sw: VecDeque::new(),
            axil: AxilMaster::new(),
            wait: 0,
            tx_off: false,
            mem_r: AxiReadSlave::new(),
            tx,
            held: [0; 2],
            credit_now: None,
            cycle_in_phase: 0,
            phase_len: 0,
            draining: false,
            reset_now: false,
            load: 0.5,
            idle_run: 0,
            cov: NiCoverage::default(),
            rx: Rx::new(
                land,
                vcs,
                [rx_buffer_flits(params_p), rx_class1_flits(params_p)],
                rx_packet_flits(params_p),
            ),
            only_bad: false,
            irq_enable: None,
            burst: None,
            golden_dirty: true,
            ar_copy: None,
            ar_step: false,
            ar_ok_at: None,
            ar_copies: false,
            ar_collective: false,
            ar_stim: ArStimulus::default(),
            ar_partner: None,
            phases: 0,
            trace_t: 0,
            trace_read: false,
            reset_fill: false,
            axi_faults: None,
            axi_cnt_turn: 0,
        })
    }

    /// Inject AXI4 error responses: one 16-byte line in `one_in` (drawn
    /// with `seed`) of the source regions and the landing area answers
    /// SLVERR or DECERR (half each) in the memory's fault map, the same
    /// in the golden model's memory ([`SparseMemory::set_fault`]): read
    /// beats of those lines return that RRESP (and random data), write
    /// bursts touching them that BRESP. Off by default. Not with the
    /// allreduce engine (its copy and fragment reads are not covered).
    pub fn set_axi_faults(&mut self, seed: u64, one_in: u64) -> Result<()> {
        anyhow::ensure!(
            self.params.ni.ar_communicators == 0,
            "set_axi_faults: not with the allreduce engine (ni.ar_communicators = {})",
            self.params.ni.ar_communicators
        );
        anyhow::ensure!(one_in > 0, "set_axi_faults: one_in = 0");
        self.axi_faults = Some((seed, one_in));
        self.apply_axi_faults();
        Ok(())
    }

    /// Draw the fault map into the bench's memory and the golden model's.
    fn apply_axi_faults(&mut self) {
        let Some((seed, one_in)) = self.axi_faults else {
            return;
        };
        let mut rng = Rng::new(seed);
        let areas: Vec<(u64, u64)> = self
            .regions
            .iter()
            .map(|&b| (b, REGION))
            .chain(std::iter::once((self.rx.land, 2 * REGION)))
            .collect();
        for (base, len) in areas {
            for line in (base..base + len).step_by(16) {
                if rng.below(one_in) == 0 {
                    let resp = if rng.chance(0.5) {
                        exanet_sim::ni::memory::resp::SLVERR
                    } else {
                        exanet_sim::ni::memory::resp::DECERR
                    };
                    self.mem.set_fault(line, resp);
                    self.golden.mem_mut().set_fault(line, resp);
                }
            }
        }
    }

    /// With `on`, the allreduce stimulus also posts good descriptors on a
    /// box of one rank (their copy compared burst by burst); off by default
    /// (the copy holds the receive decisions, so the general benches keep
    /// their timing): the test `allreduce_single_rank_copies_match_the_golden_model`
    /// turns it on.
    pub fn set_ar_copies(&mut self, on: bool) {
        self.ar_copies = on;
    }

    /// The allreduce bench's stimulus keys (the point's `header_walk`,
    /// `reset_readback`): off by default at an engine point, where
    /// `allreduce_*` tests' coverage floors were measured without them.
    /// Without the engine the `ni` bench always has both.
    pub fn set_ar_stimulus(&mut self, s: ArStimulus) {
        self.ar_stim = s;
    }

    /// Single header errors walk over all 128 bits, and other packets
    /// get walked upsets on top ([`ArStimulus::header_walk`]).
    fn walks_headers(&self) -> bool {
        !self.has_engine() || self.ar_stim.header_walk != 0
    }

    /// Registers are filled before a mid-run reset and read back after it
    /// ([`ArStimulus::reset_readback`]).
    fn reads_back_resets(&self) -> bool {
        !self.has_engine() || self.ar_stim.reset_readback != 0
    }

    /// Keep IRQ_ENABLE at `mask` (every software write of it writes
    /// `mask`); random by default.
    pub fn set_irq_enable(&mut self, mask: u32) {
        self.irq_enable = Some(mask);
    }

    /// Inject only packets the receive path must reject, and never move
    /// the landing window (the zero-bytes-written test).
    pub fn set_only_bad(&mut self, on: bool) {
        self.only_bad = on;
    }

    /// The landing area `[base, base + 2 * REGION)` the receive agent's
    /// packets aim at, and the bytes there in the RTL's memory and the
    /// golden model's.
    pub fn landing_bytes(&self) -> (Vec<u8>, Vec<u8>) {
        let n = 2 * REGION as usize;
        (
            self.mem.read(self.rx.land, n),
            self.golden.mem().read(self.rx.land, n),
        )
    }

    /// What the run since the last [`Bench::reset`] exercised.
    pub fn coverage(&self) -> NiCoverage {
        let mut c = self.cov.clone();
        c.axi_r_errors = self.mem_r.err_beats;
        c
    }

    /// Both sides idle: nothing queued, in flight or owed.
    fn idle(&self) -> bool {
        self.sw.is_empty()
            && self.axil.idle()
            && self.tx.idle()
            && self.mem_r.idle()
            && self.held == [0; 2]
            && !self.golden.has_packet()
            && self.rx.idle()
    }
}

impl Bench for NiBench {
    fn block(&self) -> &str {
        // The engine's point keys are the `allreduce` bench's (its
        // summaries and rerun lines name that bench).
        if self.has_engine() {
            "allreduce"
        } else {
            "ni"
        }
    }

    fn point(&self) -> String {
        let s = self.ar_stim.text();
        if s.is_empty() {
            point_text(&self.params)
        } else {
            format!("{},{s}", point_text(&self.params))
        }
    }

    fn emit(&self) -> Result<Emitted> {
        emit_ni(&self.params)
    }

    fn bind(&mut self, sim: &Sim) -> Result<()> {
        let p = |n: &str, w: u32| sim.port_w(n, w);
        self.ports = Some(Ports {
            ni: NiPorts::bind(sim, "", "out")?,
            reset: p("reset", 1)?,
            credit_in_valid: p("credit_in_valid", 1)?,
            credit_in_vc: p("credit_in_vc", 4)?,
            in_valid: p("in_valid", 1)?,
            in_data: p("in_data", 128)?,
            in_head: p("in_head", 1)?,
            in_tail: p("in_tail", 1)?,
            in_vc: p("in_vc", 4)?,
            credit_out_valid: p("credit_out_valid", 1)?,
            credit_out_vc: p("credit_out_vc", 4)?,
        });
        p("node", 22)?.set(self.me.to_bits() as u64);
        Ok(())
    }

    fn reset(&mut self) {
        let mem = self.mem.clone();
        let mut fresh = Self::with_golden(self.params.clone(), self.golden_params.clone())
            .expect("validated at construction");
        fresh.ports = self.ports.take();
        fresh.only_bad = self.only_bad;
        fresh.ar_copies = self.ar_copies;
        fresh.ar_stim = self.ar_stim;
        fresh.irq_enable = self.irq_enable;
        fresh.axi_faults = self.axi_faults;
        if let Some(b) = &self.burst {
            fresh.set_mailbox_burst(b.senders.len(), b.limit);
        }
        fresh.mem = mem.clone();
        *fresh.golden.mem_mut() = mem;
        *self = fresh;
        self.reset_now = true; // power-on: reset in the first cycle
    }

    fn drive(&mut self, rng: &mut Rng, _cycle: u64) {
        self.drive_cycle(rng);
    }

    fn check(&mut self, cycle: u64) -> Option<Mismatch> {
        self.check_cycle(cycle).err()
    }

    fn advance(&mut self) {
        self.trace_t += 1;
        if self.reset_now {
            self.trace_t = 0;
            // The reset cycle: a new phase with a fresh golden model.
            self.reset_now = false;
            let mem = self.mem.clone();
            let mut g = Ni::new(&self.golden_params, self.me).expect("validated");
            *g.mem_mut() = mem;
            g.set_write_log(true);
            g.set_explicit_events(true);
            self.golden = g;
            self.golden_dirty = true;
            self.rx.outstanding.clear();
            self.rx.landing.clear();
            self.rx.sending_msgs.clear();
            self.rx.early = None;
            self.cov.resets += 1;
            if self.cov.resets > 1 && self.burst.is_none() && self.reads_back_resets() {
                // A reset in the middle of the run: what it reset is read
                // back before the set-up writes it again.
                self.queue_reset_readback();
            }
            self.start_phase();
        }
    }
}
