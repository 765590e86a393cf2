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
//! - router port: every flit out is credited back in the next cycle on the
//!   NI's VC (an always-draining router input);
//! - nothing enters the receive side.
//!
//! Every emitted packet is compared word for word with the golden model's
//! (`exanet_sim::ni::Ni` given the same accesses and memory), so a figure
//! never comes from a run that sent the wrong packets.

use anyhow::{bail, Context, Result};
use exanet_hdl::ni::{emit_ni, NiRtlParams};
use exanet_sim::ni::{regs, AxilResp, Ni, Prot, SparseMemory};
use exanet_sim::packet::coords::Coords;
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

struct Ports {
    clock: Port,
    reset: Port,
    awvalid: Port,
    awready: Port,
    awaddr: Port,
    awprot: Port,
    wvalid: Port,
    wdata: Port,
    bvalid: Port,
    bready: Port,
    bresp: Port,
    arvalid: Port,
    rready: Port,
    m_arvalid: Port,
    m_arready: Port,
    m_araddr: Port,
    m_arlen: Port,
    m_rvalid: Port,
    m_rready: Port,
    m_rdata: Port,
    out_valid: Port,
    out_data: Port,
    out_head: Port,
    out_tail: Port,
    credit_in_valid: Port,
    credit_in_vc: Port,
    tx_pick: Port,
    tx_busy: Port,
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
    p: Ports,
    vc: u64,
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
    // Router port.
    credit_next: bool,
    // The packet being received, and the golden ones to compare with.
    words: Vec<u128>,
    expect: VecDeque<Vec<u128>>,
    seen: Seen,
}

impl Bench {
    fn new(params: &NiRtlParams, mem_latency: u64) -> Result<Bench> {
        let e = emit_ni(params)?;
        let sim = Sim::from_emitted(&e, &BuildOptions::default())?;
        let w = |n: &str, b: u32| sim.port_w(n, b);
        let p = Ports {
            clock: w("clock", 1)?,
            reset: w("reset", 1)?,
            awvalid: w("s_awvalid", 1)?,
            awready: w("s_awready", 1)?,
            awaddr: w("s_awaddr", 20)?,
            awprot: w("s_awprot", 1)?,
            wvalid: w("s_wvalid", 1)?,
            wdata: w("s_wdata", 32)?,
            bvalid: w("s_bvalid", 1)?,
            bready: w("s_bready", 1)?,
            bresp: w("s_bresp", 2)?,
            arvalid: w("s_arvalid", 1)?,
            rready: w("s_rready", 1)?,
            m_arvalid: w("m_arvalid", 1)?,
            m_arready: w("m_arready", 1)?,
            m_araddr: w("m_araddr", 42)?,
            m_arlen: w("m_arlen", 8)?,
            m_rvalid: w("m_rvalid", 1)?,
            m_rready: w("m_rready", 1)?,
            m_rdata: w("m_rdata", 128)?,
            out_valid: w("out_valid", 1)?,
            out_data: w("out_data", 128)?,
            out_head: w("out_head", 1)?,
            out_tail: w("out_tail", 1)?,
            credit_in_valid: w("credit_in_valid", 1)?,
            credit_in_vc: w("credit_in_vc", 4)?,
            tx_pick: w("tx_pick", 1)?,
            tx_busy: w("tx_busy", 1)?,
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
            vc: params.vc as u64,
            cycle: 0,
            mem_latency,
            mem,
            golden,
            ops: VecDeque::new(),
            b_owed: 0,
            last_accept: 0,
            bursts: VecDeque::new(),
            credit_next: false,
            words: Vec::new(),
            expect: VecDeque::new(),
            seen: Seen::default(),
        };
        b.p.reset.set(1);
        b.step()?;
        b.step()?;
        b.p.reset.set(0);
        Ok(b)
    }

    /// One clock cycle: drive, eval, observe every handshake, rising edge.
    fn step(&mut self) -> Result<()> {
        let p = &self.p;
        let t = self.cycle;
        p.clock.set(0);
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
        // Router port: credit for the flit of the previous cycle.
        p.credit_in_valid.set(self.credit_next as u64);
        p.credit_in_vc.set(self.vc);
        self.sim.eval();

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
        if p.tx_pick.get() == 1 {
            self.seen.pick.get_or_insert(t);
            let pk = self.golden.emit_packet().with_context(|| {
                format!("cycle {t}: tx_pick but the golden model has no packet")
            })?;
            self.expect.push_back(pk.words);
        }
        self.credit_next = p.out_valid.get() == 1;
        if self.credit_next {
            if p.out_head.get() == 1 {
                self.seen.head.get_or_insert(t);
                self.words.clear();
            }
            self.words.push(p.out_data.get_u128());
            self.seen.flits += 1;
            if p.out_tail.get() == 1 {
                self.seen.tail = Some(t);
                self.seen.packets += 1;
                let want = self.expect.pop_front().with_context(|| {
                    format!("cycle {t}: a packet out with no golden packet picked")
                })?;
                if want != self.words {
                    bail!(
                        "cycle {t}: packet {} differs from the golden model's",
                        self.seen.packets
                    );
                }
            }
        }
        p.clock.set(1);
        self.sim.eval();
        self.cycle += 1;
        Ok(())
    }

    fn idle(&self) -> bool {
        self.ops.is_empty()
            && self.b_owed == 0
            && self.bursts.is_empty()
            && self.expect.is_empty()
            && self.p.tx_busy.get() == 0
            && !self.golden.has_packet()
            && !self.credit_next
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
        "\nResources: `exanet generate --out out && exanet synth --out out --block ni` (default config)."
    );
    Ok(())
}
