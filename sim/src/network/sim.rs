//! The network: routers, links, endpoints and the cycle loop (see the
//! timing in the [`crate::network`] doc).

use super::endpoint::Endpoint;
use super::links::Links;
use super::params::NetworkParams;
use super::scoreboard::Scoreboard;
use super::source::Source;
use super::stats::{ClassAcc, Deadlock};
use super::watchdog::blocked_channels;
use crate::router::{Flit, Router, RouterInputs};
use crate::topology::Topology;
use anyhow::{bail, Result};
use std::collections::HashMap;

/// What arrives at one port in one cycle: a flit (into the input) and a credit
/// (for the output); which of them are valid is in the arrival masks.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Slot {
    pub(super) flit: Flit,
    pub(super) credit_vc: u8,
}

/// What the router's local port delivers to an endpoint in one cycle.
#[derive(Clone, Copy, Debug, Default)]
struct Inbox {
    flit: Flit,
    flit_valid: bool,
    credit_valid: bool,
    credit_vc: u8,
}

/// What crossed one terminal's local router port during one cycle (the
/// router's view; recorded only when [`Network::record_local_io`] is on).
/// The endpoint returns a credit for `from_router`'s VC in the same cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocalIo {
    /// The flit the endpoint injected (on the router's local input).
    pub to_router: Option<Flit>,
    /// The flit on the router's local output (consumed by the endpoint).
    pub from_router: Option<Flit>,
    /// The VC of the credit on the router's local credit output.
    pub credit_from_router: Option<u8>,
}

/// Arrival mask bit of a credit on `port` (flits use bit `port`).
pub(super) const CREDIT: u32 = 16;

const NONE: u32 = u32::MAX;

/// A whole network of router models with endpoints.
pub struct Network {
    pub(super) p: NetworkParams,
    pub(super) topo: Topology,
    pub(super) ports: usize,
    pub(super) dir_ports: usize,
    pub(super) locals: usize,
    pub(super) words: usize,
    /// Link slots per port: link_latency + 2.
    pub(super) depth: usize,
    pub(super) routers: Vec<Router>,
    /// Per (node, port): the node and port at the other end of the link (`NONE` if unconnected/local).
    pub(super) peer: Vec<(u32, u8)>,
    /// Per ((node, slot), port): what arrives at that port during cycles = slot (mod depth).
    pub(super) slots: Vec<Slot>,
    /// Per (node, slot): bit p = a flit arrives on port p, bit 16 + p = a credit.
    pub(super) arrive: Vec<u32>,
    pub(super) eps: Vec<Endpoint>,
    /// Per (terminal, cycle mod 2): what the router's local port delivers to the endpoint.
    ep_in: Vec<Inbox>,
    /// Which routers and endpoints run in which cycle.
    pub(super) wakeups: Wakeups,
    /// Traffic creation.
    pub(super) src: Source,
    pub(super) sb: Scoreboard,
    pub(super) acc: [ClassAcc; 2],
    pub(super) tagged_live: u64,
    pub(super) t: u64,
    pub(super) flits_in_network: u64,
    pub(super) last_move: u64,
    pub(super) deadlock: Option<Deadlock>,
    pub(super) inputs: RouterInputs,
    pub(super) router_cycles: u64,
    /// Per terminal: its local port's traffic during the last cycle (empty when off).
    local_io: Vec<LocalIo>,
    /// The framed links (`None`: ideal wires of `link_latency`).
    pub(super) links: Option<Links>,
    /// Raw packets in flight, by (destination terminal, header word): how
    /// the receiving endpoint tells them from scoreboard packets.
    raw_expect: HashMap<(u32, u128), u32>,
    /// Raw packets delivered and not yet taken.
    arrivals: Vec<Arrival>,
    /// Ids of scoreboard packets delivered and not yet taken (`None`: not
    /// recorded; see [`Network::record_deliveries`]).
    delivered_ids: Option<Vec<u64>>,
}

/// A raw packet ([`Network::send_raw`]) whose tail reached its terminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// The destination terminal.
    pub term: usize,
    /// The VC it arrived on (its class is `vc / vcs_per_class`).
    pub vc: u8,
    /// Its flits, as sent.
    pub flits: Vec<Flit>,
    /// The cycle its tail was consumed.
    pub cycle: u64,
}

/// Which routers and endpoints have work in which cycle: only those are
/// stepped, so an idle part of a large network costs nothing.
pub(super) struct Wakeups {
    /// Per cycle mod link depth: routers to tick then.
    pub(super) wake: Vec<Vec<u32>>,
    /// Per router: the cycle it is scheduled for (no double entries).
    sched: Vec<u64>,
    /// Per router: the last cycle it ticked.
    pub(super) last_tick: Vec<u64>,
    /// Per cycle mod 2: endpoints to step then.
    pub(super) ep_wake: [Vec<u32>; 2],
    /// Per endpoint: the cycle it is scheduled for.
    ep_sched: Vec<u64>,
    /// Per endpoint: the last cycle it stepped.
    pub(super) ep_last: Vec<u64>,
    /// Link slots per port (the length of `wake`).
    depth: u64,
}

impl Wakeups {
    fn new(depth: usize, nodes: usize, terminals: usize) -> Wakeups {
        Wakeups {
            wake: vec![Vec::new(); depth],
            sched: vec![u64::MAX; nodes],
            last_tick: vec![u64::MAX; nodes],
            ep_wake: [Vec::new(), Vec::new()],
            ep_sched: vec![u64::MAX; terminals],
            ep_last: vec![u64::MAX; terminals],
            depth: depth as u64,
        }
    }

    /// Tick router `node` in `cycle` (at most link depth − 1 cycles ahead).
    #[inline]
    pub(super) fn router(&mut self, node: usize, cycle: u64) {
        if self.sched[node] != cycle {
            self.sched[node] = cycle;
            self.wake[(cycle % self.depth) as usize].push(node as u32);
        }
    }

    /// Step endpoint `term` in `cycle` (this one or the next).
    #[inline]
    pub(super) fn endpoint(&mut self, term: usize, cycle: u64) {
        if self.ep_sched[term] != cycle {
            self.ep_sched[term] = cycle;
            self.ep_wake[(cycle & 1) as usize].push(term as u32);
        }
    }
}

impl Network {
    /// Build a network; checks the parameters and (unless disabled) deadlock freedom.
    pub fn new(p: &NetworkParams) -> Result<Self> {
        p.validate()?;
        if p.check_deadlock {
            crate::deadlock::check(&p.router)?;
        }
        let r = &p.router;
        let topo = r.topology.clone();
        let (nodes, ports) = (topo.num_nodes(), topo.num_ports());
        let terminals = nodes * topo.local_ports;
        // Ideal wires: a router output reaches the far router link_latency + 1
        // cycles later. Framed links: router outputs go to link_tx and link_rx
        // outputs reach the router the next cycle.
        let depth = if p.links.is_some() {
            2
        } else {
            p.link_latency + 2
        };
        let mut peer = vec![(NONE, 0); nodes * ports];
        for n in 0..nodes {
            for port in 0..topo.num_dir_ports() {
                if let Some((m, q)) = topo.neighbour(n, port) {
                    peer[n * ports + port] = (m as u32, q as u8);
                }
            }
        }
        let routers = (0..nodes)
            .map(|n| Router::new(r, n))
            .collect::<Result<Vec<_>>>()?;
        let src = Source::new(p, &topo, terminals)?;
        let links = match &p.links {
            Some(f) => Some(Links::new(f, &peer, ports)?),
            None => None,
        };
        Ok(Network {
            topo: topo.clone(),
            ports,
            dir_ports: topo.num_dir_ports(),
            locals: topo.local_ports,
            words: r.flit_words(),
            depth,
            routers,
            peer,
            slots: vec![Slot::default(); nodes * ports * depth],
            arrive: vec![0; nodes * depth],
            eps: vec![Endpoint::new(r.buffer_flits); terminals],
            ep_in: vec![Inbox::default(); terminals * 2],
            wakeups: Wakeups::new(depth, nodes, terminals),
            src,
            sb: Scoreboard::new(p.order_check),
            acc: Default::default(),
            tagged_live: 0,
            t: 0,
            flits_in_network: 0,
            last_move: 0,
            deadlock: None,
            inputs: RouterInputs::default(),
            router_cycles: 0,
            local_io: Vec::new(),
            links,
            raw_expect: HashMap::new(),
            arrivals: Vec::new(),
            delivered_ids: None,
            p: p.clone(),
        })
    }

    /// The current cycle.
    pub fn cycle(&self) -> u64 {
        self.t
    }

    /// Number of terminals.
    pub fn terminals(&self) -> usize {
        self.eps.len()
    }

    /// The router models.
    pub fn routers(&self) -> &[Router] {
        &self.routers
    }

    /// Flits injected and not yet ejected.
    pub fn flits_in_network(&self) -> u64 {
        self.flits_in_network
    }

    /// Packets created and not yet delivered (queued at sources or in flight).
    pub fn packets_live(&self) -> usize {
        self.sb.live()
    }

    /// The watchdog's report, once it has fired.
    pub fn deadlock(&self) -> Option<&Deadlock> {
        self.deadlock.as_ref()
    }

    /// Scoreboard errors so far (first 20) and their count.
    pub fn errors(&self) -> (&[String], u64) {
        (&self.sb.errors, self.sb.error_count)
    }

    /// Packets delivered so far.
    pub fn delivered(&self) -> u64 {
        self.sb.delivered
    }

    /// Record every terminal's local-port traffic of each cycle (for
    /// co-simulation against RTL routers); off by default.
    pub fn record_local_io(&mut self, on: bool) {
        self.local_io = if on {
            vec![LocalIo::default(); self.eps.len()]
        } else {
            Vec::new()
        };
    }

    /// Per terminal, its local port's traffic during the last cycle
    /// [`Network::step`] ran (empty unless [`Network::record_local_io`] is on).
    pub fn local_io(&self) -> &[LocalIo] {
        &self.local_io
    }

    /// Whether nothing is left: no packet queued or being sent at an
    /// endpoint, no flit in a router, no flit or credit on a link.
    pub fn quiet(&self) -> bool {
        self.eps.iter().all(|e| !e.busy())
            && self.routers.iter().all(|r| !r.has_flits())
            && self.arrive.iter().all(|&m| m == 0)
            && self.ep_in.iter().all(|i| !i.flit_valid && !i.credit_valid)
            && self.links.as_ref().is_none_or(|l| l.idle())
    }
    /// One cycle, in phases: create traffic; step the endpoints (consume
    /// what their router ejected, inject); tick the routers with what
    /// arrived on their links and put what they send on the links; watch
    /// for a network that stopped moving.
    pub fn step(&mut self) {
        let t = self.t;
        if self.src.generating {
            self.generate();
        }
        self.local_io.fill(LocalIo::default());
        let mut moved = self.step_endpoints(t);
        moved |= self.tick_links(t);
        moved |= self.tick_routers(t);
        self.watch(t, moved);
        self.t += 1;
    }

    /// The endpoints woken for cycle `t`; whether a flit moved.
    fn step_endpoints(&mut self, t: u64) -> bool {
        let mut moved = false;
        let mut list = std::mem::take(&mut self.wakeups.ep_wake[(t & 1) as usize]);
        for &term in &list {
            let term = term as usize;
            if self.wakeups.ep_last[term] == t {
                continue;
            }
            self.wakeups.ep_last[term] = t;
            moved |= self.step_endpoint(term, t);
        }
        list.clear();
        self.wakeups.ep_wake[(t & 1) as usize] = list;
        moved
    }

    /// Endpoint `term` in cycle `t`: consume the flit its router ejected
    /// (and credit it back at once), inject its next flit, take a credit;
    /// whether a flit moved.
    fn step_endpoint(&mut self, term: usize, t: u64) -> bool {
        let mut moved = false;
        let node = term / self.locals;
        let lport = self.dir_ports + term % self.locals;
        let ms = node * self.depth + (t % self.depth as u64) as usize;
        let rslot = ms * self.ports + lport;
        let inbox = std::mem::take(&mut self.ep_in[term * 2 + (t & 1) as usize]);
        if let Some(io) = self.local_io.get_mut(term) {
            io.from_router = inbox.flit_valid.then_some(inbox.flit);
            io.credit_from_router = inbox.credit_valid.then_some(inbox.credit_vc);
        }
        if inbox.flit_valid {
            moved = true;
            self.flits_in_network -= 1;
            self.arrive[ms] |= 1 << (CREDIT + lport as u32);
            self.slots[rslot].credit_vc = inbox.flit.vc;
            self.wakeups.router(node, t);
            if self.in_window(t) {
                let class = inbox.flit.vc as usize / self.p.router.vcs_per_class;
                self.acc[class].accepted_flits += 1;
            }
            let f = &inbox.flit;
            if f.head && !self.raw_expect.is_empty() && !self.eps[term].in_raw(f.vc) {
                let key = (term as u32, f.low128());
                if let Some(n) = self.raw_expect.get_mut(&key) {
                    *n -= 1;
                    if *n == 0 {
                        self.raw_expect.remove(&key);
                    }
                    self.eps[term].start_raw(f);
                }
            }
            if self.eps[term].in_raw(f.vc) {
                if let Some(flits) = self.eps[term].receive_raw(f) {
                    self.arrivals.push(Arrival {
                        term,
                        vc: f.vc,
                        flits,
                        cycle: t,
                    });
                }
            } else if let Some(rec) =
                self.eps[term].receive(&inbox.flit, self.words, term as u32, &mut self.sb)
            {
                if let Some(log) = self.delivered_ids.as_mut() {
                    log.push(crate::router::header_fields::dva(rec.header));
                }
                self.delivered_packet(rec);
            }
        }
        if let Some((f, head, bad)) = self.eps[term].inject(self.words) {
            moved = true;
            if !bad {
                self.flits_in_network += 1;
            }
            if let Some(io) = self.local_io.get_mut(term) {
                io.to_router = Some(f);
            }
            self.slots[rslot].flit = f;
            self.arrive[ms] |= 1 << lport;
            self.wakeups.router(node, t);
            if let Some(id) = head {
                if let Some(r) = self.sb.get_mut(id) {
                    r.injected = t;
                }
            }
        }
        if inbox.credit_valid {
            self.eps[term].credit(inbox.credit_vc);
        }
        if self.eps[term].busy() {
            self.wakeups.endpoint(term, t + 1);
        }
        moved
    }

    /// The routers woken for cycle `t`; whether a flit moved.
    fn tick_routers(&mut self, t: u64) -> bool {
        let mut moved = false;
        let s = (t % self.depth as u64) as usize;
        let mut list = std::mem::take(&mut self.wakeups.wake[s]);
        for &node in &list {
            let node = node as usize;
            if self.wakeups.last_tick[node] == t {
                continue;
            }
            self.wakeups.last_tick[node] = t;
            self.router_cycles += 1;
            self.gather_inputs(node, s);
            self.routers[node].tick(&self.inputs);
            moved |= self.send_outputs(node, t);
            if self.routers[node].has_flits() {
                self.wakeups.router(node, t + 1);
            }
        }
        list.clear();
        self.wakeups.wake[s] = list;
        moved
    }

    /// Router `node`'s inputs from what arrived in link slot `s`.
    fn gather_inputs(&mut self, node: usize, s: usize) {
        self.inputs.clear();
        let ms = node * self.depth + s;
        let m = std::mem::take(&mut self.arrive[ms]);
        let mut fm = m & 0xffff;
        while fm != 0 {
            let port = fm.trailing_zeros() as usize;
            fm &= fm - 1;
            self.inputs
                .set_flit(port, self.slots[ms * self.ports + port].flit);
        }
        let mut cm = m >> CREDIT;
        while cm != 0 {
            let port = cm.trailing_zeros() as usize;
            cm &= cm - 1;
            self.inputs
                .set_credit(port, self.slots[ms * self.ports + port].credit_vc);
        }
    }

    /// Router `node`'s flits and credits of cycle `t` onto its links (they
    /// arrive `link_latency + 1` cycles later) or to its endpoints (next
    /// cycle); whether it sent a flit.
    fn send_outputs(&mut self, node: usize, t: u64) -> bool {
        let far = t + 1 + self.p.link_latency as u64;
        let far_s = (far % self.depth as u64) as usize;
        let near_s = ((t + 1) & 1) as usize;
        let base = node * self.ports;
        let (mut ov, mut cv) = (
            self.routers[node].out_valid(),
            self.routers[node].credit_valid(),
        );
        let moved = ov != 0;
        while ov != 0 {
            let o = ov.trailing_zeros() as usize;
            ov &= ov - 1;
            let f = *self.routers[node].out_flit(o).expect("valid");
            if o < self.dir_ports {
                if let Some(l) = self.links.as_mut() {
                    let e = l.end_of[base + o] as usize;
                    l.in_flit[e] = Some(f);
                    continue;
                }
                let (qn, qp) = self.peer[base + o];
                let qms = qn as usize * self.depth + far_s;
                self.slots[qms * self.ports + qp as usize].flit = f;
                self.arrive[qms] |= 1 << qp;
                self.wakeups.router(qn as usize, far);
            } else {
                let term = node * self.locals + (o - self.dir_ports);
                let sl = &mut self.ep_in[term * 2 + near_s];
                sl.flit = f;
                sl.flit_valid = true;
                self.wakeups.endpoint(term, t + 1);
            }
        }
        while cv != 0 {
            let p = cv.trailing_zeros() as usize;
            cv &= cv - 1;
            let vc = self.routers[node].credit_out(p).expect("valid");
            if p < self.dir_ports {
                if let Some(l) = self.links.as_mut() {
                    let e = l.end_of[base + p] as usize;
                    l.in_credit[e] |= 1 << vc;
                    continue;
                }
                let (qn, qp) = self.peer[base + p];
                let qms = qn as usize * self.depth + far_s;
                self.slots[qms * self.ports + qp as usize].credit_vc = vc;
                self.arrive[qms] |= 1 << (CREDIT + qp as u32);
                self.wakeups.router(qn as usize, far);
            } else {
                let term = node * self.locals + (p - self.dir_ports);
                let sl = &mut self.ep_in[term * 2 + near_s];
                sl.credit_valid = true;
                sl.credit_vc = vc;
                self.wakeups.endpoint(term, t + 1);
            }
        }
        moved
    }

    /// The watchdog: a network with flits in it where nothing moved for
    /// `watchdog` cycles is reported as deadlocked (once).
    fn watch(&mut self, t: u64, moved: bool) {
        // A link that is down or training holds flits back: not a deadlock
        // (the report counts the cycles and the link-downs).
        let link_down = self.links.as_ref().is_some_and(|l| l.any_not_up);
        if moved || link_down || self.flits_in_network == 0 {
            self.last_move = t;
        } else if self.p.watchdog > 0
            && t - self.last_move >= self.p.watchdog
            && self.deadlock.is_none()
        {
            self.deadlock = Some(Deadlock {
                cycle: t,
                flits_in_network: self.flits_in_network,
                stalled_for: t - self.last_move,
                blocked: blocked_channels(&self.topo, &self.routers, 64),
            });
        }
    }

    /// Framed links in cycle `t`: their PHYs, `link_tx` and `link_rx`
    /// ends; what they put out reaches the routers in `t + 1`.
    fn tick_links(&mut self, t: u64) -> bool {
        let Some(mut l) = self.links.take() else {
            return false;
        };
        let window = self.in_window(t);
        let next = t + 1;
        let s = (next % self.depth as u64) as usize;
        let (depth, ports) = (self.depth, self.ports);
        let (slots, arrive, wakeups) = (&mut self.slots, &mut self.arrive, &mut self.wakeups);
        let moved = l.tick(t, window, |end, flit, credit| {
            let (node, port) = (end.node as usize, end.port as usize);
            let ms = node * depth + s;
            let slot = &mut slots[ms * ports + port];
            if let Some(f) = flit {
                slot.flit = f;
                arrive[ms] |= 1 << port;
            }
            if let Some(vc) = credit {
                slot.credit_vc = vc;
                arrive[ms] |= 1 << (CREDIT + port as u32);
            }
            wakeups.router(node, next);
        });
        self.links = Some(l);
        moved
    }

    /// Queue a packet of a real protocol (e.g. an NI's, from
    /// [`crate::ni::wire::Packet::to_flits`]) at terminal `src` for terminal
    /// `dst` in message class `class`: it is injected like any other
    /// packet (after those already queued in its class, on the VC the
    /// network gives the flow, which this sets on every flit) and handed
    /// over whole, as sent, by [`Network::take_arrivals`] once its tail has
    /// reached `dst`. Needs 128-bit flits or wider, and a packet the
    /// router accepts (header, size, at most `max_packet_flits`); the
    /// scoreboard does not check it. It is told from scoreboard packets at
    /// `dst` by its header word (a synthetic packet with exactly the same
    /// header would be taken for it: synthetic headers carry PDID 0).
    pub fn send_raw(
        &mut self,
        src: usize,
        dst: usize,
        mut flits: Vec<Flit>,
        class: usize,
    ) -> Result<()> {
        let terms = self.eps.len();
        if src >= terms || dst >= terms {
            bail!("send_raw: terminal {src} -> {dst}, this network has {terms}");
        }
        if class >= self.p.router.classes {
            bail!(
                "send_raw: class {class}, the routers have {}",
                self.p.router.classes
            );
        }
        if self.words < 2 {
            bail!("send_raw: needs flits of 128 bits or more");
        }
        if flits.is_empty() || flits.len() > self.p.router.max_packet_flits {
            bail!(
                "send_raw: a packet of {} flits (router.max_packet_flits = {})",
                flits.len(),
                self.p.router.max_packet_flits
            );
        }
        let dest = self.src_dest_coords(dst);
        let vc = crate::router::route_compute::injection_vc(&self.p.router, class, dest);
        for f in &mut flits {
            f.vc = vc;
        }
        *self
            .raw_expect
            .entry((dst as u32, flits[0].low128()))
            .or_insert(0) += 1;
        self.eps[src].queue_raw(flits, class);
        self.wakeups.endpoint(src, self.t);
        Ok(())
    }

    /// The network's topology.
    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// Virtual channels per message class.
    pub fn vcs_per_class(&self) -> usize {
        self.p.router.vcs_per_class
    }

    /// Raw packets delivered since the last call, in delivery order.
    pub fn take_arrivals(&mut self) -> Vec<Arrival> {
        std::mem::take(&mut self.arrivals)
    }

    /// Record the id of every scoreboard packet ([`Network::send`]) whose
    /// tail reaches its terminal, for [`Network::take_delivered`] (off by
    /// default: a driver that waits for its own packets turns it on).
    pub fn record_deliveries(&mut self, on: bool) {
        self.delivered_ids = on.then(Vec::new);
    }

    /// Ids of the scoreboard packets delivered since the last call, in
    /// delivery order (empty unless [`Network::record_deliveries`] is on).
    pub fn take_delivered(&mut self) -> Vec<u64> {
        self.delivered_ids
            .as_mut()
            .map_or_else(Vec::new, std::mem::take)
    }

    /// Packets queued (not yet started) at terminal `term` in class `class`.
    pub fn queued_at(&self, term: usize, class: usize) -> usize {
        self.eps[term].queued(class)
    }

    /// The framed links' ends (empty with ideal wires), in the order of
    /// their (node, port), each with its golden `link_tx`, `link_rx` and
    /// what its PHY interface carried in the last [`Network::step`].
    pub fn link_ends(&self) -> &[super::links::End] {
        self.links.as_ref().map_or(&[], |l| &l.ends)
    }

    /// The router models, mutable (fault injection in tests).
    pub fn routers_mut(&mut self) -> &mut [Router] {
        &mut self.routers
    }

    /// Skip the ticks of quiet framed links (on by default; the run is the
    /// same either way, only slower without).
    pub fn set_link_idle_skipping(&mut self, on: bool) {
        if let Some(l) = self.links.as_mut() {
            l.skip_idle = on;
        }
    }

    /// Link-end ticks skipped so far as idle (framed links).
    pub fn link_ticks_skipped(&self) -> u64 {
        self.links.as_ref().map_or(0, |l| l.skipped_ticks)
    }

    /// Router ticks actually executed (the rest were skipped as idle).
    pub fn router_ticks(&self) -> u64 {
        self.router_cycles
    }
}
