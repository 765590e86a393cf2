//! The router top: requests, separable allocation and the clock edge, exactly
//! as specified in the module doc of [`crate::router`].

use super::allocator::{pick_class, rr_next, rr_pick};
use super::flit::Flit;
use super::header_fields::{dest, dest_wide, header_ecc_ok, HeaderCheck};
use super::input_unit::InputBuffers;
use super::output_unit::OutputUnit;
use super::params::{Allocator, RouterParams};
use super::route_compute::{BadPacket, RouteCompute, RouteOut};
use crate::topology::MAX_PORTS;
use anyhow::Result;

/// The inputs of one cycle: a flit and a credit per port (valid bit masks).
#[derive(Clone, Debug, Default)]
pub struct RouterInputs {
    pub flit: [Flit; MAX_PORTS],
    /// Bit p: `flit[p]` is valid.
    pub flit_valid: u16,
    pub credit_vc: [u8; MAX_PORTS],
    /// Bit p: a credit for VC `credit_vc[p]` arrives on output port p.
    pub credit_valid: u16,
}

impl RouterInputs {
    /// No flits, no credits.
    pub fn clear(&mut self) {
        self.flit_valid = 0;
        self.credit_valid = 0;
    }

    /// Drive flit `f` on input port `p`.
    pub fn set_flit(&mut self, p: usize, f: Flit) {
        self.flit[p] = f;
        self.flit_valid |= 1 << p;
    }

    /// Return one credit for `vc` on output port `p`.
    pub fn set_credit(&mut self, p: usize, vc: u8) {
        self.credit_vc[p] = vc;
        self.credit_valid |= 1 << p;
    }
}

/// The registered outputs of one cycle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouterOutputs {
    /// Per output port: the flit leaving this cycle.
    pub flit: [Option<Flit>; MAX_PORTS],
    /// Per input port: the VC of a credit returned upstream this cycle.
    pub credit: [Option<u8>; MAX_PORTS],
}

/// State of one input VC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IvcState {
    /// Between packets: the front flit, if any, must be a head.
    Idle,
    /// Forwarding a packet that holds output `port`, VC `vc`.
    Active { port: u8, vc: u8 },
    /// Discarding a bad packet until its tail.
    Dropping,
}

/// Error and drop counters, counted without bound; the RTL's registers
/// hold them modulo `2^counter_bits` ([`super::RouterParams::counter_value`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouterCounters {
    /// Per input port: bad packets dropped whole.
    pub dropped_packets: [u64; MAX_PORTS],
    /// Per input port: flits discarded on arrival (VC out of range or buffer full).
    pub flit_errors: [u64; MAX_PORTS],
    /// Per output port: credits ignored (VC out of range or above the buffer depth).
    pub credit_errors: [u64; MAX_PORTS],
}

/// `want` encoding: kind in bits 9:8, output port in 7:4, output VC in 3:0.
const WANT_UNKNOWN: u16 = 0;
const WANT_HEAD: u16 = 1 << 8;
const WANT_BODY: u16 = 2 << 8;
const WANT_DROP: u16 = 3 << 8;

#[inline]
fn want(kind: u16, port: u8, vc: u8) -> u16 {
    kind | (port as u16) << 4 | vc as u16
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Req {
    None,
    Fwd { port: u8, vc: u8 },
    Drop,
}

/// One router. Construction allocates; `tick` never does.
#[derive(Clone, Debug)]
pub struct Router {
    ports: usize,
    vcs: usize,
    vpc: usize,
    classes: usize,
    two_flit_header: bool,
    wide_coords: bool,
    rc: RouteCompute,
    check: HeaderCheck,
    inb: InputBuffers,
    /// Per input VC: its state and the memoised route of the head at its front.
    ivc: Vec<(IvcState, Option<Result<RouteOut, BadPacket>>)>,
    /// Per input VC: what its front flit asks for, derived from `ivc` (a cache
    /// for speed, `WANT_UNKNOWN` after every change of state or front). A
    /// head's VC bits are rewritten by every request (the VC it asks for).
    want: Vec<u16>,
    /// Per input VC: the output VCs the head at its front may take (with `want`).
    head_mask: Vec<u16>,
    out: OutputUnit,
    in_ptr: [[u8; 2]; MAX_PORTS],
    out_ptr: [[u8; 2]; MAX_PORTS],
    /// iSLIP: per input port, the accept pointer over the output ports.
    acc_ptr: [u8; MAX_PORTS],
    /// Wavefront: the diagonal served first.
    diag: u8,
    allocator: Allocator,
    iterations: usize,
    credit_reg: [u8; MAX_PORTS],
    credit_valid: u16,
    counters: RouterCounters,
}

impl Router {
    /// The router at node index `node` of `p.topology`, in its reset state.
    pub fn new(p: &RouterParams, node: usize) -> Result<Self> {
        p.validate()?;
        anyhow::ensure!(
            node < p.topology.num_nodes(),
            "router node {node}: must be below {} nodes",
            p.topology.num_nodes()
        );
        let (ports, vcs) = (p.num_ports(), p.num_vcs());
        Ok(Router {
            ports,
            vcs,
            vpc: p.vcs_per_class,
            classes: p.classes,
            two_flit_header: p.flit_bits == 64,
            wide_coords: p.topology.wide_coords(),
            rc: RouteCompute::new(p, node),
            check: header_ecc_ok,
            inb: InputBuffers::new(ports, vcs, p.buffer_flits, p.flit_words()),
            ivc: vec![(IvcState::Idle, None); ports * vcs],
            out: OutputUnit::new(ports, vcs, p.buffer_flits, p.max_packet_flits),
            want: vec![WANT_UNKNOWN; ports * vcs],
            head_mask: vec![0; ports * vcs],
            in_ptr: [[0; 2]; MAX_PORTS],
            out_ptr: [[0; 2]; MAX_PORTS],
            acc_ptr: [0; MAX_PORTS],
            diag: 0,
            allocator: p.allocator,
            iterations: p.alloc_iterations,
            credit_reg: [0; MAX_PORTS],
            credit_valid: 0,
            counters: RouterCounters::default(),
        })
    }

    /// Replace the header check (SECDED by default; see `header_fields`).
    pub fn set_header_check(&mut self, f: HeaderCheck) {
        self.check = f;
    }

    /// Number of ports.
    pub fn num_ports(&self) -> usize {
        self.ports
    }

    /// Number of VCs per link.
    pub fn vcs(&self) -> usize {
        self.vcs
    }

    /// The registered outputs during the current cycle.
    pub fn outputs(&self) -> RouterOutputs {
        let mut o = RouterOutputs::default();
        for p in 0..self.ports {
            o.flit[p] = self.out.reg(p).copied();
            o.credit[p] = self.credit_out(p);
        }
        o
    }

    /// The flit on output port `p` this cycle.
    #[inline]
    pub fn out_flit(&self, p: usize) -> Option<&Flit> {
        self.out.reg(p)
    }

    /// Bit mask of output ports with a flit this cycle.
    #[inline]
    pub fn out_valid(&self) -> u16 {
        self.out.reg_valid()
    }

    /// The VC of the credit returned upstream on input port `p` this cycle.
    #[inline]
    pub fn credit_out(&self, p: usize) -> Option<u8> {
        (self.credit_valid >> p & 1 == 1).then_some(self.credit_reg[p])
    }

    /// Bit mask of input ports returning a credit this cycle.
    #[inline]
    pub fn credit_valid(&self) -> u16 {
        self.credit_valid
    }

    /// Drop and error counters.
    pub fn counters(&self) -> &RouterCounters {
        &self.counters
    }

    /// Flits buffered in input (port, vc).
    pub fn buffered(&self, port: usize, vc: usize) -> usize {
        self.inb.count(port, vc)
    }

    /// Flits buffered in all input VCs.
    pub fn buffered_total(&self) -> usize {
        self.inb.total()
    }

    /// Whether any input VC holds a flit.
    #[inline]
    pub fn has_flits(&self) -> bool {
        self.inb.any()
    }

    /// State of input (port, vc).
    pub fn ivc_state(&self, port: usize, vc: usize) -> IvcState {
        self.ivc[port * self.vcs + vc].0
    }

    /// Credits of output (port, vc).
    pub fn credits(&self, port: usize, vc: usize) -> u16 {
        self.out.credits(port, vc)
    }

    /// Whether output (port, vc) is held by a packet.
    pub fn ovc_busy(&self, port: usize, vc: usize) -> bool {
        self.out.busy(port, vc)
    }

    /// The output (port, VC) a non-empty input VC is forwarding to or waiting
    /// for, `None` if it is empty, dropping or its route is not yet known
    /// (a waiting head reports its per-flow VC; with `vc_select = free` it
    /// takes whichever VC of its set is free first).
    pub fn wants(&self, port: usize, vc: usize) -> Option<(u8, u8)> {
        let q = port * self.vcs + vc;
        if self.inb.count(port, vc) == 0 {
            return None;
        }
        match self.ivc[q] {
            (IvcState::Active { port, vc }, _) => Some((port, vc)),
            (IvcState::Idle, Some(Ok(r))) => Some((r.port, r.vc)),
            _ => None,
        }
    }

    /// 1 if input (p, v) requests this cycle (from registered state), else 0.
    #[inline(always)]
    fn requests(&mut self, p: usize, v: usize) -> u32 {
        let q = p * self.vcs + v;
        let mut w = self.want[q];
        if w == WANT_UNKNOWN {
            w = self.derive_want(p, v);
            self.want[q] = w;
        }
        let port = (w >> 4 & 15) as usize;
        if w & WANT_DROP == WANT_HEAD {
            // the lowest VC of the head's set that is free with room for a packet
            let m = self.out.ok_mask(1, port) & self.head_mask[q] as u32;
            if m == 0 {
                return 0;
            }
            self.want[q] = want(WANT_HEAD, port as u8, m.trailing_zeros() as u8);
            return 1;
        }
        self.out.ok((w >> 8) as usize, port, (w & 15) as usize)
    }

    /// The request of input (p, v), which `requests` found granted-able.
    #[inline]
    fn request_of(&self, p: usize, v: usize) -> Req {
        let w = self.want[p * self.vcs + v];
        if w & WANT_DROP == WANT_DROP {
            Req::Drop
        } else {
            Req::Fwd {
                port: (w >> 4 & 15) as u8,
                vc: (w & 15) as u8,
            }
        }
    }

    /// What the front flit of non-empty input (p, v) asks for (memoising the route of a head);
    /// `WANT_UNKNOWN` while a 64-bit header is incomplete.
    fn derive_want(&mut self, p: usize, v: usize) -> u16 {
        let q = p * self.vcs + v;
        match self.ivc[q].0 {
            IvcState::Active { port, vc } => want(WANT_BODY, port, vc),
            IvcState::Dropping => WANT_DROP,
            IvcState::Idle => {
                let r = match self.ivc[q].1 {
                    Some(r) => r,
                    None => {
                        let Some(r) = self.route_head(p, v) else {
                            return WANT_UNKNOWN;
                        };
                        self.ivc[q].1 = Some(r);
                        r
                    }
                };
                match r {
                    Err(_) => WANT_DROP,
                    Ok(r) => {
                        self.head_mask[q] = r.mask;
                        want(WANT_HEAD, r.port, r.vc)
                    }
                }
            }
        }
    }

    /// Route of the packet at the front of idle input (p, v); `None` while a
    /// 64-bit header is still incomplete.
    fn route_head(&self, p: usize, v: usize) -> Option<Result<RouteOut, BadPacket>> {
        let (head, tail) = self.inb.head_tail(p, v, 0);
        if !head {
            return Some(Err(BadPacket::Orphan));
        }
        let header = if self.two_flit_header {
            if tail {
                return Some(Err(BadPacket::TruncatedHeader));
            }
            if self.inb.count(p, v) < 2 {
                return None;
            }
            (self.inb.word(p, v, 1, 0) as u128) << 64 | self.inb.word(p, v, 0, 0) as u128
        } else {
            (self.inb.word(p, v, 0, 1) as u128) << 64 | self.inb.word(p, v, 0, 0) as u128
        };
        if !(self.check)(header) {
            return Some(Err(BadPacket::HeaderCheck));
        }
        let d = if self.wide_coords {
            dest_wide(header)
        } else {
            dest(header)
        };
        Some(self.rc.compute(d, p, v))
    }

    /// The clock edge ending the current cycle, with this cycle's inputs.
    pub fn tick(&mut self, inp: &RouterInputs) {
        if !self.inb.any() {
            // nothing buffered: no request, no grant; only the inputs land
            self.out.clear_regs();
            self.credit_valid = 0;
            self.land(inp);
            return;
        }
        let mut chosen = [(0u8, 0u8, Req::None); MAX_PORTS];
        let mut grant = [u8::MAX; MAX_PORTS];
        if self.allocator == Allocator::Separable {
            self.separable(&mut chosen, &mut grant);
        } else {
            self.matching(&mut chosen, &mut grant);
        }
        // 4. the edge
        self.out.clear_regs();
        self.credit_valid = 0;
        self.push_inputs(inp);
        for (o, &g) in grant.iter().enumerate().take(self.ports) {
            if g == u8::MAX {
                continue;
            }
            let p = g as usize;
            let (v, cls, req) = chosen[p];
            let Req::Fwd { vc: w, .. } = req else {
                unreachable!("grant without forward request")
            };
            let (v, cls) = (v as usize, cls as usize);
            let mut f = self.inb.pop(p, v);
            let q = p * self.vcs + v;
            self.want[q] = WANT_UNKNOWN;
            if self.ivc[q].0 == IvcState::Idle {
                self.ivc[q].1 = None;
                if !f.tail {
                    self.ivc[q].0 = IvcState::Active {
                        port: o as u8,
                        vc: w,
                    };
                }
            } else if f.tail {
                self.ivc[q].0 = IvcState::Idle;
            }
            f.vc = w;
            self.out.send(o, f);
            if self.allocator == Allocator::Separable {
                self.out_ptr[o][cls] = rr_next(p, self.ports);
            }
            self.in_ptr[p][cls] = rr_next(v - cls * self.vpc, self.vpc);
            self.credit_reg[p] = v as u8;
            self.credit_valid |= 1 << p;
        }
        for (p, &(v, cls, req)) in chosen.iter().enumerate().take(self.ports) {
            if req != Req::Drop {
                continue;
            }
            let (v, cls) = (v as usize, cls as usize);
            let q = p * self.vcs + v;
            let f = self.inb.pop(p, v);
            self.want[q] = WANT_UNKNOWN;
            if self.ivc[q].0 == IvcState::Idle {
                self.ivc[q].1 = None;
                self.counters.dropped_packets[p] += 1;
                if !f.tail {
                    self.ivc[q].0 = IvcState::Dropping;
                }
            } else if f.tail {
                self.ivc[q].0 = IvcState::Idle;
            }
            self.in_ptr[p][cls] = rr_next(v - cls * self.vpc, self.vpc);
            self.credit_reg[p] = v as u8;
            self.credit_valid |= 1 << p;
        }
        self.apply_credits(inp);
    }

    /// Steps 1-3 with the separable allocator: per input port one VC
    /// (class 1 first, round-robin), then per output port one of the inputs
    /// whose chosen VC wants it (class 1 first, round-robin).
    fn separable(&mut self, chosen: &mut [(u8, u8, Req); MAX_PORTS], grant: &mut [u8; MAX_PORTS]) {
        // 1-2. requests and input arbitration, from registered state; the class-1
        // VCs of a port are looked at first, class 0 only if none of them requests
        let mut out_req = [[0u32; 2]; MAX_PORTS];
        let class_mask = (1u32 << self.vpc) - 1;
        for (p, ch) in chosen.iter_mut().enumerate().take(self.ports) {
            let ne = self.inb.nonempty(p);
            if ne == 0 {
                continue;
            }
            for cls in (0..self.classes).rev() {
                let base = cls * self.vpc;
                let mut m = (ne >> base) & class_mask;
                let mut req_mask = 0u32;
                while m != 0 {
                    let i = m.trailing_zeros();
                    m &= m - 1;
                    req_mask |= self.requests(p, base + i as usize) << i;
                }
                if req_mask != 0 {
                    let v = base + rr_pick(req_mask, self.in_ptr[p][cls]);
                    let r = self.request_of(p, v);
                    *ch = (v as u8, cls as u8, r);
                    if let Req::Fwd { port, .. } = r {
                        out_req[port as usize][cls] |= 1 << p;
                    }
                    break;
                }
            }
        }
        // 3. output arbitration
        for (o, g) in grant.iter_mut().enumerate().take(self.ports) {
            if let Some(cls) = pick_class(out_req[o]) {
                *g = rr_pick(out_req[o][cls], self.out_ptr[o][cls]) as u8;
            }
        }
    }

    /// Steps 1-3 with a matching allocator (`islip`, `wavefront`).
    ///
    /// Requests: input port `p` wants output `o` when one of its VCs
    /// requests a forward to `o`; the pair is class 1 when one of those VCs
    /// is class 1. An input port with a VC that requests a drop drops
    /// instead (class 1 first, round-robin from its pointer) and wants no
    /// output. Matching: see [`Allocator`]. Then a matched input port pops
    /// the VC among those of the pair's class that want its output,
    /// round-robin from its pointer of that class.
    fn matching(&mut self, chosen: &mut [(u8, u8, Req); MAX_PORTS], grant: &mut [u8; MAX_PORTS]) {
        let ports = self.ports;
        // per input port: its forward-requesting VCs, and per output the VCs wanting it
        let mut fwd_vcs = [0u32; MAX_PORTS];
        // want[p] bit o: p wants o; want1[p] bit o: with a class-1 VC
        let mut want = [0u32; MAX_PORTS];
        let mut want1 = [0u32; MAX_PORTS];
        let class1 = ((1u32 << self.vcs) - 1) & !((1u32 << self.vpc) - 1);
        for p in 0..ports {
            let mut m = self.inb.nonempty(p);
            let (mut drops, mut fwd) = (0u32, 0u32);
            while m != 0 {
                let v = m.trailing_zeros() as usize;
                m &= m - 1;
                if self.requests(p, v) == 0 {
                    continue;
                }
                match self.request_of(p, v) {
                    Req::Drop => drops |= 1 << v,
                    Req::Fwd { port, .. } => {
                        fwd |= 1 << v;
                        want[p] |= 1 << port;
                        if class1 >> v & 1 == 1 {
                            want1[p] |= 1 << port;
                        }
                    }
                    Req::None => {}
                }
            }
            if drops != 0 {
                let cls = usize::from(drops & class1 != 0);
                let m = if cls == 1 { drops & class1 } else { drops };
                let base = cls * self.vpc;
                let v = rr_pick(m >> base, self.in_ptr[p][cls]) + base;
                chosen[p] = (v as u8, cls as u8, Req::Drop);
                want[p] = 0;
                want1[p] = 0;
            } else {
                fwd_vcs[p] = fwd;
            }
        }
        // matched[p]: the output matched to input p
        let mut matched = [u8::MAX; MAX_PORTS];
        match self.allocator {
            Allocator::Islip => self.islip(&want, &want1, &mut matched),
            _ => self.wavefront(&want, &want1, &mut matched),
        }
        for p in 0..ports {
            if matched[p] == u8::MAX {
                continue;
            }
            let o = matched[p] as usize;
            let cls = usize::from(want1[p] >> o & 1 == 1);
            let base = cls * self.vpc;
            let mut cand = 0u32;
            let mut m = fwd_vcs[p] >> base & ((1u32 << self.vpc) - 1);
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                if let Req::Fwd { port, .. } = self.request_of(p, base + i) {
                    if port as usize == o {
                        cand |= 1 << i;
                    }
                }
            }
            let v = base + rr_pick(cand, self.in_ptr[p][cls]);
            chosen[p] = (v as u8, cls as u8, self.request_of(p, v));
            grant[o] = p as u8;
        }
    }

    /// iSLIP over `want` (class-1 pairs `want1`): each iteration, every
    /// unmatched output grants one unmatched input that wants it (class-1
    /// pairs first, round-robin from the output's pointer of that class),
    /// and every unmatched input accepts one of its grants (class-1 pairs
    /// first, round-robin from its accept pointer). Pointers move past the
    /// partner only for the matches of the first iteration.
    fn islip(
        &mut self,
        want: &[u32; MAX_PORTS],
        want1: &[u32; MAX_PORTS],
        matched: &mut [u8; MAX_PORTS],
    ) {
        let ports = self.ports;
        let all = (1u32 << ports) - 1;
        let (mut free_in, mut free_out) = (all, all);
        for it in 0..self.iterations {
            // grants: per input, the outputs granting it (and the class-1 ones)
            let mut got = [0u32; MAX_PORTS];
            let mut got1 = [0u32; MAX_PORTS];
            let mut fo = free_out;
            while fo != 0 {
                let o = fo.trailing_zeros() as usize;
                fo &= fo - 1;
                let (mut r, mut r1) = (0u32, 0u32);
                for p in 0..ports {
                    if free_in >> p & 1 == 1 {
                        r |= (want[p] >> o & 1) << p;
                        r1 |= (want1[p] >> o & 1) << p;
                    }
                }
                if r == 0 {
                    continue;
                }
                let cls = usize::from(r1 != 0);
                let p = rr_pick(if cls == 1 { r1 } else { r }, self.out_ptr[o][cls]);
                got[p] |= 1 << o;
                if cls == 1 {
                    got1[p] |= 1 << o;
                }
            }
            for p in 0..ports {
                if got[p] == 0 {
                    continue;
                }
                let m = if got1[p] != 0 { got1[p] } else { got[p] };
                let o = rr_pick(m, self.acc_ptr[p]);
                matched[p] = o as u8;
                free_in &= !(1 << p);
                free_out &= !(1 << o);
                if it == 0 {
                    let cls = usize::from(want1[p] >> o & 1 == 1);
                    self.out_ptr[o][cls] = rr_next(p, ports);
                    self.acc_ptr[p] = rr_next(o, ports);
                }
            }
        }
    }

    /// Wavefront over `want`: first the class-1 pairs, then all pairs on
    /// the ports still free; each pass visits the diagonals `d` (the pairs
    /// with `(p + o) mod P = d`) from `diag` on and matches every wanted
    /// pair whose input and output are both still free. `diag` moves on by
    /// one after a cycle with a match.
    fn wavefront(
        &mut self,
        want: &[u32; MAX_PORTS],
        want1: &[u32; MAX_PORTS],
        matched: &mut [u8; MAX_PORTS],
    ) {
        let ports = self.ports;
        let all = (1u32 << ports) - 1;
        let (mut free_in, mut free_out) = (all, all);
        for w in [want1, want] {
            for t in 0..ports {
                let d = (self.diag as usize + t) % ports;
                for p in 0..ports {
                    let o = (d + ports - p) % ports;
                    if w[p] >> o & 1 == 1 && free_in >> p & 1 == 1 && free_out >> o & 1 == 1 {
                        matched[p] = o as u8;
                        free_in &= !(1 << p);
                        free_out &= !(1 << o);
                    }
                }
            }
        }
        if free_in != all {
            self.diag = rr_next(self.diag as usize, ports);
        }
    }

    /// Arriving flits go to the tail of their VC's buffer (full at the start of the cycle: discarded, counted).
    #[inline]
    fn push_inputs(&mut self, inp: &RouterInputs) {
        let port_mask = (1u16 << self.ports) - 1;
        let mut fv = inp.flit_valid & port_mask;
        while fv != 0 {
            let p = fv.trailing_zeros() as usize;
            fv &= fv - 1;
            let f = &inp.flit[p];
            if (f.vc as usize) >= self.vcs || !self.inb.push(p, f.vc as usize, f) {
                self.counters.flit_errors[p] += 1;
            }
        }
    }

    /// Returned credits increment their counters (after this cycle's decrements).
    #[inline]
    fn apply_credits(&mut self, inp: &RouterInputs) {
        let port_mask = (1u16 << self.ports) - 1;
        let mut cv = inp.credit_valid & port_mask;
        while cv != 0 {
            let o = cv.trailing_zeros() as usize;
            cv &= cv - 1;
            if !self.out.credit(o, inp.credit_vc[o] as usize) {
                self.counters.credit_errors[o] += 1;
            }
        }
    }

    /// The inputs of a cycle in which nothing was popped.
    #[inline]
    fn land(&mut self, inp: &RouterInputs) {
        self.push_inputs(inp);
        self.apply_credits(inp);
    }
}
