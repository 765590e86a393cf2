//! A random-stimulus test bench for one router, usable against the golden
//! model and (with the same calls) against the RTL in co-simulation.
//!
//! Per input port an upstream source keeps one credit counter per VC and
//! sends packets flit by flit, interleaving VCs, with random bubbles; it
//! never sends without a credit. Per output port a downstream sink counts
//! the flits it holds per VC, checks it never holds more than
//! `buffer_flits` (the router never overdraws its credits), and returns at
//! most one credit per cycle at random. Packets have random destinations,
//! sizes (1..=max_packet_flits flits) and classes; a fraction is made bad
//! (destination or fpga out of range, failing header check, orphan body
//! flits, truncated 64-bit header).
//!
//! The scoreboard checks that every good packet leaves exactly once, intact,
//! on the port an independent reference route names, in its class, without
//! interleaving on its output VC, and in the order packets entered its input
//! VC; every bad packet is dropped and counted on its input port.
//!
//! Use per cycle: [`RouterHarness::drive`] gives the inputs of this cycle;
//! after the router's outputs of this cycle are known (they are registered,
//! so they do not depend on the inputs), [`RouterHarness::advance`] with
//! those outputs applies the clock edge to the harness.

use super::flit::Flit;
use super::header_fields::{header_ecc_ok, lsb, Coords, HeaderCheck, HeaderFields};
use super::model::{RouterInputs, RouterOutputs};
use super::params::{RouterParams, TieBreak, MAX_VCS};
use crate::rng::Rng;
use crate::topology::{Topology, MAX_PORTS};
use std::collections::{HashMap, VecDeque};

/// Knobs of the random stimulus.
#[derive(Clone, Debug)]
pub struct HarnessOptions {
    /// Probability per cycle that an idle input VC starts a packet.
    pub start: f64,
    /// Probability that a source sends nothing this cycle.
    pub bubble: f64,
    /// Probability per cycle that a sink returns a credit (if it holds flits).
    pub drain: f64,
    /// Fraction of packets made bad.
    pub bad: f64,
    /// The header check the router uses (the bench predicts drops with it).
    pub check: HeaderCheck,
    /// Good packets pick their output port uniformly among the ports some
    /// destination routes to, then a destination routed there (a router
    /// measured alone); otherwise destinations are uniform over the nodes.
    pub uniform_ports: bool,
    /// Good packets of each (input port, VC) walk through every
    /// destination offset (`(dest - here) mod k` per dimension, and each
    /// fpga) in a fixed order, so every (input port, VC, offset) is reached
    /// after as many good packets per (port, VC) as there are offsets
    /// (without `uniform_ports`); otherwise destinations are random.
    pub cover: bool,
    /// With `cover`: where each walk starts, per `port * MAX_VCS + vc`
    /// (what [`RouterHarness::cover_next`] of a previous harness returned,
    /// so a walk continues over harnesses at other nodes); empty: at 0.
    pub cover_from: Vec<u32>,
}

impl Default for HarnessOptions {
    fn default() -> Self {
        HarnessOptions {
            start: 0.05,
            bubble: 0.1,
            drain: 0.7,
            bad: 0.0,
            check: header_ecc_ok,
            uniform_ports: false,
            cover: false,
            cover_from: Vec::new(),
        }
    }
}

#[derive(Clone, Debug)]
struct Pkt {
    flits: Vec<Flit>,
    sent: usize,
}

#[derive(Clone, Debug)]
struct Expect {
    in_port: usize,
    in_vc: usize,
    out_port: usize,
    flits: Vec<Flit>,
}

/// Counts at the end of (or during) a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HarnessReport {
    /// Good packets injected / delivered.
    pub injected: u64,
    pub delivered: u64,
    /// Bad packets injected, per input port.
    pub bad_injected: [u64; MAX_PORTS],
    /// Flits delivered.
    pub flits_out: u64,
    /// The first scoreboard errors (empty when clean).
    pub errors: Vec<String>,
}

/// The bench. See the module doc.
pub struct RouterHarness {
    p: RouterParams,
    topo: Topology,
    here: [usize; 3],
    opt: HarnessOptions,
    rng: Rng,
    next_id: u64,
    stop: bool,
    src_credits: Vec<[u16; MAX_VCS]>,
    src_pkt: Vec<[Option<Pkt>; MAX_VCS]>,
    sink_occ: Vec<[u16; MAX_VCS]>,
    sink_cur: Vec<[Option<SinkCur>; MAX_VCS]>,
    expect: HashMap<u64, Expect>,
    order: HashMap<(usize, usize), VecDeque<u64>>,
    inputs: RouterInputs,
    report: HarnessReport,
    /// With `uniform_ports`: the good destinations of each output port that has any.
    by_port: Vec<Vec<Coords>>,
    /// Per `port * MAX_VCS + vc`: the position of its destination walk.
    cover_pos: Vec<u32>,
    /// Per `(port * MAX_VCS + vc) * targets + target`: a good packet of
    /// that input went to that offset (see [`RouterHarness::covered`]).
    covered: Vec<bool>,
}

/// Payload word `w` of flit `i` of packet `id` (word 0 names the packet for framing checks).
pub fn payload_word(id: u64, i: usize, w: usize) -> u64 {
    if w == 0 {
        return id << 16 | i as u64;
    }
    let mut z = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64) << 32 ^ w as u64;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z ^ (z >> 27)
}

impl RouterHarness {
    /// A bench for router `node` of `p` (params must be valid).
    pub fn new(p: &RouterParams, node: usize, opt: HarnessOptions, seed: u64) -> Self {
        let ports = p.num_ports();
        let mut h = RouterHarness {
            topo: p.topology.clone(),
            here: p.topology.coords(node),
            p: p.clone(),
            opt,
            rng: Rng::new(seed),
            next_id: 1,
            stop: false,
            src_credits: vec![[p.buffer_flits as u16; MAX_VCS]; ports],
            src_pkt: vec![Default::default(); ports],
            sink_occ: vec![[0; MAX_VCS]; ports],
            sink_cur: vec![[None; MAX_VCS]; ports],
            expect: HashMap::new(),
            order: HashMap::new(),
            inputs: RouterInputs::default(),
            report: HarnessReport::default(),
            by_port: Vec::new(),
            cover_pos: vec![0; ports * MAX_VCS],
            covered: Vec::new(),
        };
        for (i, &v) in h.opt.cover_from.iter().enumerate().take(ports * MAX_VCS) {
            h.cover_pos[i] = v;
        }
        h.covered = vec![false; ports * MAX_VCS * h.targets()];
        if h.opt.uniform_ports {
            let t = &h.topo;
            let mut by_port = vec![Vec::new(); ports];
            for node in 0..t.num_nodes() {
                let [x, y, z] = t.coords(node);
                for fpga in 0..t.local_ports {
                    let d = Coords {
                        x: x as u8,
                        y: y as u8,
                        z: z as u8,
                        fpga: fpga as u8,
                    };
                    if let Some(port) = h.reference_port(d) {
                        by_port[port].push(d);
                    }
                }
            }
            h.by_port = by_port.into_iter().filter(|v| !v.is_empty()).collect();
        }
        h
    }

    /// Stop starting new packets (to drain).
    pub fn stop_injection(&mut self) {
        self.stop = true;
    }

    /// Whether every packet has been delivered or dropped and every sink is empty.
    pub fn quiet(&self) -> bool {
        self.expect.is_empty()
            && self.src_pkt.iter().all(|v| v.iter().all(|p| p.is_none()))
            && self.sink_occ.iter().all(|v| v.iter().all(|&o| o == 0))
    }

    /// Whether every upstream credit counter is back at `buffer_flits`.
    pub fn credits_full(&self) -> bool {
        let n = self.p.num_vcs();
        self.src_credits
            .iter()
            .all(|c| c[..n].iter().all(|&x| x as usize == self.p.buffer_flits))
    }

    /// Flits output (port, vc)'s sink holds (not yet credited back).
    pub fn sink_held(&self, port: usize, vc: usize) -> usize {
        self.sink_occ[port][vc] as usize
    }

    /// Destination offsets per input VC: nodes times local ports.
    pub fn targets(&self) -> usize {
        self.topo.num_nodes() * self.topo.local_ports
    }

    /// Offset index of destination `d` from this router:
    /// `((ox + kx * (oy + ky * oz)) * local_ports + fpga`, with
    /// `o = (d - here) mod k` per dimension.
    pub fn target_of(&self, d: Coords) -> usize {
        let (t, dc) = (&self.topo, d.xyz());
        let o: Vec<usize> = (0..3)
            .map(|i| (dc[i] + t.dims[i] - self.here[i]) % t.dims[i])
            .collect();
        (o[0] + t.dims[0] * (o[1] + t.dims[1] * o[2])) * t.local_ports + d.fpga as usize
    }

    /// The destination at offset index `target` from this router.
    fn dest_of(&self, target: usize) -> Coords {
        let t = &self.topo;
        let (fpga, mut o) = (target % t.local_ports, target / t.local_ports);
        let mut c = [0usize; 3];
        for (i, ci) in c.iter_mut().enumerate() {
            *ci = (self.here[i] + o % t.dims[i]) % t.dims[i];
            o /= t.dims[i];
        }
        Coords {
            x: c[0] as u8,
            y: c[1] as u8,
            z: c[2] as u8,
            fpga: fpga as u8,
        }
    }

    /// Where each (input port, VC)'s destination walk stands (index
    /// `port * MAX_VCS + vc`): the `cover_from` of a harness that continues it.
    pub fn cover_next(&self) -> Vec<u32> {
        self.cover_pos.clone()
    }

    /// Which (input port, input VC, destination offset) a good packet
    /// reached: index `(port * MAX_VCS + vc) * targets() + target_of(dest)`.
    pub fn covered(&self) -> &[bool] {
        &self.covered
    }

    /// Counts and errors so far.
    pub fn report(&self) -> &HarnessReport {
        &self.report
    }

    fn error(&mut self, msg: String) {
        if self.report.errors.len() < 20 {
            self.report.errors.push(msg);
        }
    }

    /// The output port an independent reference names for `d` (None if bad).
    fn reference_port(&self, d: Coords) -> Option<usize> {
        let t = &self.topo;
        let dc = d.xyz();
        if (0..3).any(|i| dc[i] >= t.dims[i]) {
            return None;
        }
        for &dim in &self.p.dim_order {
            let (h, g, k) = (self.here[dim], dc[dim], t.dims[dim]);
            if h != g {
                let plus = if t.wrap[dim] {
                    let fwd = (g + k - h) % k;
                    let tie_minus = self.p.tie_break == TieBreak::Parity && g % 2 == 1;
                    fwd < k - fwd || (fwd == k - fwd && !tie_minus)
                } else {
                    g > h
                };
                return t.dir_port(dim, plus);
            }
        }
        (usize::from(d.fpga) < t.local_ports).then(|| t.local_port(d.fpga as usize))
    }

    fn new_packet(&mut self, in_port: usize, vc: usize) -> Pkt {
        let id = self.next_id;
        self.next_id += 1;
        let t = &self.topo;
        let hf = self.p.header_flits();
        let len = hf + self.rng.below((self.p.max_packet_flits - hf + 1) as u64) as usize;
        let walk = self.opt.cover && self.by_port.is_empty();
        // With a destination walk, whether the packet is bad is drawn first:
        // only good packets take (and advance) the walk.
        let bad_first = walk && self.rng.chance(self.opt.bad);
        let mut d = Coords {
            x: self.rng.below(t.dims[0] as u64) as u8,
            y: self.rng.below(t.dims[1] as u64) as u8,
            z: self.rng.below(t.dims[2] as u64) as u8,
            fpga: self.rng.below(t.local_ports as u64) as u8,
        };
        if !self.by_port.is_empty() {
            let dests = &self.by_port[self.rng.below(self.by_port.len() as u64) as usize];
            d = dests[self.rng.below(dests.len() as u64) as usize];
        }
        if walk && !bad_first {
            // A fixed permutation of the offsets per (port, VC): the
            // position times a stride coprime with their number.
            let n = self.targets();
            let slot = in_port * MAX_VCS + vc;
            let pos = self.cover_pos[slot] as usize;
            self.cover_pos[slot] = ((pos + 1) % n) as u32;
            let stride = (n * 5 / 8..=n).find(|&a| gcd(a, n) == 1).unwrap_or(1);
            d = self.dest_of((pos * stride + slot * 7) % n);
        }
        let bad = if walk {
            bad_first
        } else {
            self.rng.chance(self.opt.bad)
        };
        let kind = if bad { self.rng.below(5) } else { 9 };
        let mut header = HeaderFields {
            dest: d,
            dva: id,
            size: len as u16,
            ..Default::default()
        }
        .pack();
        match kind {
            0 if t.dims.iter().any(|&k| k < 16) => {
                let dim = (0..3).find(|&i| t.dims[i] < 16).unwrap();
                let v = (t.dims[dim] + self.rng.below((16 - t.dims[dim]) as u64) as usize) as u8;
                match dim {
                    0 => d.x = v,
                    1 => d.y = v,
                    _ => d.z = v,
                }
            }
            1 if t.local_ports < 4 => {
                d.fpga = (t.local_ports + self.rng.below((4 - t.local_ports) as u64) as usize) as u8
            }
            _ => {}
        }
        if kind <= 1 {
            header = HeaderFields {
                dest: d,
                dva: id,
                size: len as u16,
                ..Default::default()
            }
            .pack();
        }
        if kind == 2 {
            // one upset anywhere in the protected bits or the check byte
            header ^= 1u128 << self.rng.below(lsb::ECC as u64 + 8);
        }
        let words = self.p.flit_words();
        let mut flits: Vec<Flit> = (0..len)
            .map(|i| {
                let mut f = Flit {
                    vc: vc as u8,
                    head: i == 0,
                    tail: i == len - 1,
                    ..Default::default()
                };
                for w in 0..words {
                    f.data[w] = payload_word(id, i, w);
                }
                f
            })
            .collect();
        if words == 1 {
            flits[0].data[0] = header as u64;
            flits[1].data[0] = (header >> 64) as u64;
        } else {
            flits[0].data[0] = header as u64;
            flits[0].data[1] = (header >> 64) as u64;
        }
        if kind == 3 {
            flits[0].head = false; // orphan body flits
        }
        if kind == 4 && words == 1 {
            flits.truncate(1); // truncated 64-bit header
            flits[0].tail = true;
        }
        let route =
            if !flits[0].head || (words == 1 && flits.len() < 2) || !(self.opt.check)(header) {
                None
            } else {
                self.reference_port(d)
            };
        match route {
            Some(out_port) => {
                self.report.injected += 1;
                let i = (in_port * MAX_VCS + vc) * self.targets() + self.target_of(d);
                self.covered[i] = true;
                self.order.entry((in_port, vc)).or_default().push_back(id);
                self.expect.insert(
                    id,
                    Expect {
                        in_port,
                        in_vc: vc,
                        out_port,
                        flits: flits.clone(),
                    },
                );
            }
            None => self.report.bad_injected[in_port] += 1,
        }
        Pkt { flits, sent: 0 }
    }

    /// The inputs of this cycle.
    pub fn drive(&mut self) -> &RouterInputs {
        self.inputs.clear();
        let (ports, vcs) = (self.p.num_ports(), self.p.num_vcs());
        for port in 0..ports {
            for vc in 0..vcs {
                if self.src_pkt[port][vc].is_none() && !self.stop && self.rng.chance(self.opt.start)
                {
                    let pk = self.new_packet(port, vc);
                    self.src_pkt[port][vc] = Some(pk);
                }
            }
            if !self.rng.chance(self.opt.bubble) {
                let ready: u32 = (0..vcs)
                    .filter(|&v| self.src_pkt[port][v].is_some() && self.src_credits[port][v] > 0)
                    .fold(0, |m, v| m | 1 << v);
                if ready != 0 {
                    let k = self.rng.below(ready.count_ones() as u64) as u32;
                    let mut m = ready;
                    for _ in 0..k {
                        m &= m - 1;
                    }
                    let vc = m.trailing_zeros() as usize;
                    let pk = self.src_pkt[port][vc].as_ref().unwrap();
                    self.inputs.set_flit(port, pk.flits[pk.sent]);
                }
            }
            let held: u32 = (0..vcs)
                .filter(|&v| self.sink_occ[port][v] > 0)
                .fold(0, |m, v| m | 1 << v);
            if held != 0 && self.rng.chance(self.opt.drain) {
                let k = self.rng.below(held.count_ones() as u64) as u32;
                let mut m = held;
                for _ in 0..k {
                    m &= m - 1;
                }
                self.inputs.set_credit(port, m.trailing_zeros() as u8);
            }
        }
        &self.inputs
    }

    /// The clock edge: apply this cycle's inputs (from the last `drive`) and
    /// the router's outputs of this cycle to the bench, checking them.
    pub fn advance(&mut self, out: &RouterOutputs) {
        let ports = self.p.num_ports();
        for port in 0..ports {
            if self.inputs.flit_valid >> port & 1 == 1 {
                let vc = self.inputs.flit[port].vc as usize;
                self.src_credits[port][vc] -= 1;
                let pk = self.src_pkt[port][vc].as_mut().unwrap();
                pk.sent += 1;
                if pk.sent == pk.flits.len() {
                    self.src_pkt[port][vc] = None;
                }
            }
            if self.inputs.credit_valid >> port & 1 == 1 {
                self.sink_occ[port][self.inputs.credit_vc[port] as usize] -= 1;
            }
            if let Some(vc) = out.credit[port] {
                let c = &mut self.src_credits[port][vc as usize];
                *c += 1;
                if *c as usize > self.p.buffer_flits {
                    self.error(format!(
                        "input port {port} returned a credit for vc {vc} above buffer_flits"
                    ));
                }
            }
            if let Some(f) = out.flit[port] {
                self.receive(port, f);
            }
        }
    }

    fn receive(&mut self, port: usize, f: Flit) {
        let vc = f.vc as usize;
        self.report.flits_out += 1;
        if vc >= self.p.num_vcs() {
            return self.error(format!("output port {port}: flit on vc {vc} out of range"));
        }
        self.sink_occ[port][vc] += 1;
        if self.sink_occ[port][vc] as usize > self.p.buffer_flits {
            self.error(format!(
                "output port {port} vc {vc}: more flits than credits (downstream overflow)"
            ));
        }
        let two_flit_header = self.p.flit_words() == 1;
        let cur = self.sink_cur[port][vc];
        let (id, idx) = match (f.head, cur) {
            (true, Some(c)) => {
                return self.error(format!(
                    "output port {port} vc {vc}: a head interleaves packet in progress {c:?}"
                ));
            }
            (true, None) if two_flit_header => {
                // the packet id (dva) spans both header flits: check this one with the next
                self.sink_cur[port][vc] = Some(SinkCur::FirstHalf(f));
                return;
            }
            (true, None) => (super::header_fields::dva(f.low128()), 0),
            (false, None) => {
                return self.error(format!(
                    "output port {port} vc {vc}: body flit {f:?} outside a packet"
                ));
            }
            (false, Some(SinkCur::FirstHalf(h))) => {
                let id = super::header_fields::dva((f.data[0] as u128) << 64 | h.data[0] as u128);
                if !self.check_flit(port, id, 0, h) {
                    return;
                }
                (id, 1)
            }
            (false, Some(SinkCur::In { id, next })) => {
                if f.data[0] >> 16 != id {
                    return self.error(format!(
                        "output port {port} vc {vc}: flit of packet {} interleaves packet {id}",
                        f.data[0] >> 16
                    ));
                }
                (id, next)
            }
        };
        if !self.check_flit(port, id, idx, f) {
            return;
        }
        if idx + 1 == self.expect[&id].flits.len() {
            self.sink_cur[port][vc] = None;
            self.expect.remove(&id);
            self.report.delivered += 1;
        } else {
            self.sink_cur[port][vc] = Some(SinkCur::In { id, next: idx + 1 });
        }
    }

    /// Check flit `idx` of packet `id` leaving on `port`; on the first flit also the order.
    fn check_flit(&mut self, port: usize, id: u64, idx: usize, f: Flit) -> bool {
        let Some(e) = self.expect.get(&id) else {
            self.error(format!(
                "output port {port}: unknown or duplicate packet {id}"
            ));
            return false;
        };
        let (in_port, in_vc, out_port) = (e.in_port, e.in_vc, e.out_port);
        let mut want = e.flits[idx];
        want.vc = f.vc;
        if want != f {
            self.error(format!("packet {id} flit {idx}: got {f:?}, want {want:?}"));
            return false;
        }
        if port != out_port {
            self.error(format!(
                "packet {id} left on port {port}, reference route says {out_port}"
            ));
            return false;
        }
        let vpc = self.p.vcs_per_class;
        if f.vc as usize / vpc != in_vc / vpc {
            self.error(format!("packet {id} changed class: vc {in_vc} -> {}", f.vc));
            return false;
        }
        if idx == 0 {
            let q = self
                .order
                .get_mut(&(in_port, in_vc))
                .expect("queue of a known packet");
            if q.front() != Some(&id) {
                let front = q.front().copied();
                self.error(format!(
                    "packet {id} left input ({in_port}, vc {in_vc}) before packet {front:?}"
                ));
                return false;
            }
            q.pop_front();
        }
        true
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// What a sink VC is receiving.
#[derive(Clone, Copy, Debug)]
enum SinkCur {
    /// 64-bit flits: the first header flit, checked when the second arrives.
    FirstHalf(Flit),
    /// Packet `id`, flit `next` expected.
    In { id: u64, next: usize },
}
