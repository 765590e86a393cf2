//! Router golden model: latency, throughput, flow control, allocation
//! fairness and priority, bad-packet handling, random stress.

use exanet_sim::router::harness::{HarnessOptions, RouterHarness};
use exanet_sim::router::header_fields::{dva, lsb, seal_header};
use exanet_sim::router::{
    Allocator, Coords, Flit, HeaderFields, Router, RouterInputs, RouterParams, TieBreak,
};
use exanet_sim::topology::Topology;
use std::collections::VecDeque;

fn params(
    dims: [usize; 3],
    wrap: [bool; 3],
    classes: usize,
    vpc: usize,
    flit_bits: usize,
) -> RouterParams {
    let hf = if flit_bits == 64 { 2 } else { 1 };
    let max = 2 * hf + 256 / (flit_bits / 8);
    RouterParams {
        topology: Topology::new(dims, wrap, 1).unwrap(),
        classes,
        vcs_per_class: vpc,
        flit_bits,
        max_packet_flits: max,
        buffer_flits: max + 8,
        ..Default::default()
    }
}

/// The flits of a packet for `dest` on `vc`, `len` flits, id in the dva field.
fn packet(p: &RouterParams, dest: Coords, vc: u8, len: usize, id: u64) -> Vec<Flit> {
    let h = HeaderFields {
        dest,
        dva: id,
        ..Default::default()
    }
    .pack();
    packet_with_header(p, h, vc, len, id)
}

fn packet_with_header(p: &RouterParams, h: u128, vc: u8, len: usize, id: u64) -> Vec<Flit> {
    let mut v: Vec<Flit> = (0..len)
        .map(|i| Flit {
            data: [id << 16 | i as u64, !id, id ^ 0x55, i as u64],
            head: i == 0,
            tail: i + 1 == len,
            vc,
        })
        .collect();
    if p.flit_bits == 64 {
        v[0].data = [h as u64, 0, 0, 0];
        v[1].data = [(h >> 64) as u64, 0, 0, 0];
        for f in &mut v[2..] {
            f.data[1..].fill(0);
        }
    } else {
        v[0].data[0] = h as u64;
        v[0].data[1] = (h >> 64) as u64;
        if p.flit_bits == 128 {
            for f in &mut v {
                f.data[2..].fill(0);
            }
        }
    }
    v
}

/// A header check that needs the ecc field to be what sealing the header computes.
fn ecc_matches(h: u128) -> bool {
    seal_header(h & !(0xffffu128 << lsb::ECC)) == h
}

fn coords(t: &Topology, node: usize, fpga: u8) -> Coords {
    let c = t.coords(node);
    Coords {
        x: c[0] as u8,
        y: c[1] as u8,
        z: c[2] as u8,
        fpga,
    }
}

/// A small bench: per input port a queue of flits sent in order one per
/// cycle when a credit allows; every output flit credited back the next cycle.
struct Tb {
    r: Router,
    p: RouterParams,
    t: u64,
    queue: Vec<VecDeque<Flit>>,
    up_credits: Vec<Vec<usize>>,
    /// credits owed downstream, returned one per cycle per port unless held
    credit_back: Vec<VecDeque<u8>>,
    /// (cycle, output port, flit)
    out: Vec<(u64, usize, Flit)>,
    /// (cycle, input port) of each flit sent into the router
    sent: Vec<(u64, usize, Flit)>,
    hold_credits: bool,
}

impl Tb {
    fn new(p: &RouterParams, node: usize) -> Self {
        let ports = p.num_ports();
        Tb {
            r: Router::new(p, node).unwrap(),
            p: p.clone(),
            t: 0,
            queue: vec![VecDeque::new(); ports],
            up_credits: vec![vec![p.buffer_flits; p.num_vcs()]; ports],
            credit_back: vec![VecDeque::new(); ports],
            out: vec![],
            sent: vec![],
            hold_credits: false,
        }
    }

    fn step(&mut self) {
        let o = self.r.outputs();
        let mut inp = RouterInputs::default();
        for port in 0..self.p.num_ports() {
            if let Some(f) = self.queue[port].front() {
                if self.up_credits[port][f.vc as usize] > 0 {
                    let f = self.queue[port].pop_front().unwrap();
                    self.up_credits[port][f.vc as usize] -= 1;
                    self.sent.push((self.t, port, f));
                    inp.set_flit(port, f);
                }
            }
            if !self.hold_credits {
                if let Some(vc) = self.credit_back[port].pop_front() {
                    inp.set_credit(port, vc);
                }
            }
            if let Some(f) = o.flit[port] {
                self.out.push((self.t, port, f));
                self.credit_back[port].push_back(f.vc);
            }
            if let Some(vc) = o.credit[port] {
                self.up_credits[port][vc as usize] += 1;
            }
        }
        self.r.tick(&inp);
        self.t += 1;
    }

    fn run(&mut self, n: u64) {
        for _ in 0..n {
            self.step();
        }
    }
}

#[test]
fn zero_load_latency_is_two_cycles_header_in_to_header_out() {
    for bits in [64, 128, 256] {
        let p = params([4, 4, 4], [true; 3], 2, 2, bits);
        let t = p.topology.clone();
        let node = t.node_at([1, 1, 1]);
        for (dest, fpga, want_port) in [
            (t.node_at([1, 1, 2]), 0, t.dir_port(2, true).unwrap()),
            (t.node_at([2, 1, 1]), 0, t.dir_port(0, true).unwrap()),
            (node, 0, t.local_port(0)),
        ] {
            let mut tb = Tb::new(&p, node);
            tb.run(3);
            let pk = packet(&p, coords(&t, dest, fpga), 3, 4, 7);
            tb.queue[t.local_port(0)].extend(pk.iter().copied());
            tb.run(20);
            let t_in = tb.sent[0].0;
            let (t_out, port, f) = tb.out[0];
            // 64-bit: the header is complete one cycle after its first flit
            let want = if bits == 64 { 3 } else { 2 };
            assert_eq!(t_out - t_in, want, "{bits}-bit flits");
            assert_eq!(port, want_port);
            assert!(f.head);
            // the rest follows one flit per cycle, intact, on the routed VC
            assert_eq!(tb.out.len(), 4);
            for (i, &(tt, pp, ff)) in tb.out.iter().enumerate() {
                assert_eq!((tt, pp), (t_out + i as u64, want_port));
                let mut want_f = pk[i];
                want_f.vc = f.vc;
                assert_eq!(ff, want_f);
            }
            assert_eq!(f.vc / 2, 1, "class kept");
        }
    }
}

#[test]
fn streams_one_flit_per_cycle_per_port() {
    let p = params([4, 4, 4], [true; 3], 2, 2, 128);
    let t = p.topology.clone();
    let node = t.node_at([1, 1, 1]);
    let mut tb = Tb::new(&p, node);
    // input x- -> output x+ (dest x=2), input y- -> y+ (y=2), z- -> z+, local -> local,
    // x+ -> x- (x=0), y+ -> y-, z+ -> z- : a full permutation, 20 packets of 18 flits each
    let routes: Vec<(usize, [usize; 3])> = vec![
        (t.dir_port(0, false).unwrap(), [2, 1, 1]),
        (t.dir_port(0, true).unwrap(), [0, 1, 1]),
        (t.dir_port(1, false).unwrap(), [1, 2, 1]),
        (t.dir_port(1, true).unwrap(), [1, 0, 1]),
        (t.dir_port(2, false).unwrap(), [1, 1, 2]),
        (t.dir_port(2, true).unwrap(), [1, 1, 0]),
        (t.local_port(0), [1, 1, 1]),
    ];
    let mut id = 1;
    for &(inp, d) in &routes {
        for _ in 0..20 {
            let pk = packet(&p, coords(&t, t.node_at(d), 0), 0, 18, id);
            id += 1;
            tb.queue[inp].extend(pk);
        }
    }
    tb.run(400);
    for o in 0..t.num_ports() {
        let times: Vec<u64> = tb.out.iter().filter(|x| x.1 == o).map(|x| x.0).collect();
        assert_eq!(times.len(), 360, "port {o}");
        assert_eq!(times[0], 2);
        assert!(
            times.windows(2).all(|w| w[1] == w[0] + 1),
            "port {o} has a bubble: {times:?}"
        );
    }
}

#[test]
fn fair_round_robin_at_packet_and_flit_level() {
    // packet level: 3 inputs to the same output VC (ejection, same dest)
    let p = params([4, 4, 4], [true; 3], 1, 2, 128);
    let t = p.topology.clone();
    let node = t.node_at([1, 1, 1]);
    let mut tb = Tb::new(&p, node);
    let inputs = [
        t.dir_port(0, false).unwrap(),
        t.dir_port(1, true).unwrap(),
        t.local_port(0),
    ];
    let mut id = 1;
    for &inp in &inputs {
        for _ in 0..200 {
            tb.queue[inp].extend(packet(&p, coords(&t, node, 0), 0, 5, id));
            id += 1;
        }
    }
    tb.run(1500);
    let heads: Vec<u64> = tb
        .out
        .iter()
        .filter(|x| x.2.head)
        .map(|x| dva(x.2.low128()))
        .collect();
    assert!(heads.len() > 250);
    // map each head back to its input (ids 1..=200 from input 0, ...)
    let who: Vec<u64> = heads.iter().map(|&dva| (dva - 1) / 200).collect();
    for w in who.windows(3) {
        let mut s = w.to_vec();
        s.sort_unstable();
        assert_eq!(s, vec![0, 1, 2], "round robin over 3 inputs: {who:?}");
    }
    // flit level: 2 inputs to one output port on two different output VCs alternate flit by flit
    // (ties to +: the packets 2 hops away must take x+ as well)
    let p4 = RouterParams {
        tie_break: TieBreak::Plus,
        ..params([4, 4, 4], [true; 3], 1, 4, 128)
    };
    let mut tb = Tb::new(&p4, node);
    let (a, b) = (t.dir_port(1, false).unwrap(), t.local_port(0));
    // both go x+ (lower half: VCs 0, 1); dest sums differ by one so the VCs differ
    for i in 0..30 {
        tb.queue[a].extend(packet(
            &p4,
            coords(&t, t.node_at([2, 1, 1]), 0),
            0,
            6,
            1000 + i,
        ));
        tb.queue[b].extend(packet(
            &p4,
            coords(&t, t.node_at([3, 1, 1]), 0),
            0,
            6,
            2000 + i,
        ));
    }
    tb.run(450);
    let xp = t.dir_port(0, true).unwrap();
    let vcs: Vec<u8> = tb
        .out
        .iter()
        .filter(|x| x.1 == xp)
        .map(|x| x.2.vc)
        .collect();
    assert_eq!(vcs.len(), 360);
    assert!(
        vcs.windows(2).all(|w| w[0] != w[1]),
        "flits alternate between the VCs: {vcs:?}"
    );
}

#[test]
fn high_class_has_strict_priority() {
    let p = params([4, 4, 4], [true; 3], 2, 2, 128);
    let t = p.topology.clone();
    let node = t.node_at([1, 1, 1]);
    let mut tb = Tb::new(&p, node);
    // two inputs to the same output port, class 0 and class 1
    let (a, b) = (t.dir_port(1, false).unwrap(), t.local_port(0));
    let d = coords(&t, t.node_at([2, 1, 1]), 0);
    for i in 0..40 {
        tb.queue[a].extend(packet(&p, d, 0, 18, 100 + i)); // class 0
        tb.queue[b].extend(packet(&p, d, 2, 18, 200 + i)); // class 1
    }
    tb.run(1600);
    let xp = t.dir_port(0, true).unwrap();
    let classes: Vec<u8> = tb
        .out
        .iter()
        .filter(|x| x.1 == xp)
        .map(|x| x.2.vc / 2)
        .collect();
    assert_eq!(classes.len(), 80 * 18);
    // all 720 class-1 flits leave before any class-0 flit
    assert!(classes[..720].iter().all(|&c| c == 1), "{classes:?}");
    assert!(classes[720..].iter().all(|&c| c == 0));
}

#[test]
fn one_input_port_interleaves_its_vcs_flit_by_flit() {
    let p = params([4, 4, 4], [true; 3], 2, 2, 128);
    let t = p.topology.clone();
    let node = t.node_at([1, 1, 1]);
    let mut r = Router::new(&p, node).unwrap();
    let c = t.dir_port(2, false).unwrap();
    let d = coords(&t, t.node_at([1, 1, 2]), 0);
    let lo = packet(&p, d, 0, 2, 1);
    let hi = packet(&p, d, 3, 2, 2);
    // put both heads into the buffers over two cycles, no output port conflict besides the input
    let mut inp = RouterInputs::default();
    inp.set_flit(c, lo[0]);
    r.tick(&inp);
    inp.clear();
    inp.set_flit(c, hi[0]);
    // cycle 1: only the low head is buffered: it wins
    r.tick(&inp);
    assert_eq!(
        r.out_flit(t.dir_port(2, true).unwrap()).map(|f| f.vc / 2),
        Some(0)
    );
    // now send the low body and the high body while both VCs hold flits
    inp.clear();
    inp.set_flit(c, lo[1]);
    r.tick(&inp); // cycle 2: high head vs nothing of low (low body arrives now): high wins
    assert_eq!(
        r.out_flit(t.dir_port(2, true).unwrap()).map(|f| f.vc),
        Some(3)
    );
    inp.clear();
    inp.set_flit(c, hi[1]);
    r.tick(&inp); // cycle 3: low body only (high body just arriving)
    assert_eq!(
        r.out_flit(t.dir_port(2, true).unwrap()).map(|f| f.vc),
        Some(0)
    );
    inp.clear();
    r.tick(&inp);
    assert_eq!(
        r.out_flit(t.dir_port(2, true).unwrap()).map(|f| f.vc),
        Some(3)
    );
}

#[test]
fn input_arbiter_prefers_class_one_when_both_request() {
    let p = params([4, 4, 4], [true; 3], 2, 2, 128);
    let t = p.topology.clone();
    let node = t.node_at([1, 1, 1]);
    let mut tb = Tb::new(&p, node);
    let c = t.dir_port(2, false).unwrap();
    let (zp, xp) = (t.dir_port(2, true).unwrap(), t.dir_port(0, true).unwrap());
    let to_z = coords(&t, t.node_at([1, 1, 2]), 0);
    let to_x = coords(&t, t.node_at([2, 1, 1]), 0);
    // no credits come back: one 18-flit packet per output VC leaves 8 credits
    tb.hold_credits = true;
    tb.queue[c].extend(packet(&p, to_z, 0, 18, 1));
    tb.queue[c].extend(packet(&p, to_x, 3, 18, 2));
    tb.queue[c].extend(packet(&p, to_z, 0, 18, 3)); // class 0, to z+
    tb.queue[c].extend(packet(&p, to_x, 3, 18, 4)); // class 1, to x+
    tb.run(100);
    assert_eq!(tb.out.len(), 36);
    let (wz, wx) = (tb.out[0].2.vc as usize, tb.out[18].2.vc as usize);
    assert_eq!((tb.r.credits(zp, wz), tb.r.credits(xp, wx)), (8, 8));
    assert_eq!(tb.r.buffered(c, 0) + tb.r.buffered(c, 3), 36);
    // both output VCs regain credits one per cycle in step: both heads request in the same cycle
    tb.hold_credits = false;
    tb.run(100);
    let rest: Vec<(u64, usize)> = tb.out[36..].iter().map(|x| (x.0, x.1)).collect();
    assert_eq!(rest.len(), 36);
    // the class-1 packet goes first, whole, then the class-0 one
    assert!(rest[..18].iter().all(|x| x.1 == xp), "{rest:?}");
    assert!(rest[18..].iter().all(|x| x.1 == zp), "{rest:?}");
    assert!(
        rest.windows(2).all(|w| w[1].0 == w[0].0 + 1),
        "no bubble: {rest:?}"
    );
}

#[test]
fn bad_packets_are_dropped_whole_counted_and_credited() {
    for bits in [64, 128, 256] {
        let mut p = params([4, 3, 2], [true, false, true], 2, 2, bits);
        p.topology.local_ports = 2;
        let t = p.topology.clone();
        let node = t.node_at([1, 1, 1]);
        let mut tb = Tb::new(&p, node);
        tb.r.set_header_check(ecc_matches);
        let (l0, xm, ym) = (
            t.local_port(0),
            t.dir_port(0, false).unwrap(),
            t.dir_port(1, false).unwrap(),
        );
        let good = |id| packet(&p, coords(&t, t.node_at([2, 1, 1]), 0), 0, 6, id);
        let mut bad_count = [0u64; 10];
        // destination x out of range, then a good one
        tb.queue[l0].extend(packet(
            &p,
            Coords {
                x: 4,
                y: 1,
                z: 1,
                fpga: 0,
            },
            0,
            5,
            1,
        ));
        tb.queue[l0].extend(good(2));
        bad_count[l0] += 1;
        // y out of range (mesh dimension of 3), then fpga 3 >= 2 local ports at this node
        tb.queue[ym].extend(packet(
            &p,
            Coords {
                x: 1,
                y: 3,
                z: 1,
                fpga: 0,
            },
            1,
            7,
            3,
        ));
        tb.queue[ym].extend(packet(&p, coords(&t, node, 3), 1, 4, 4));
        tb.queue[ym].extend(good(5));
        bad_count[ym] += 2;
        // failing header check (ecc field not zero), then orphan body flits, then good
        let h = HeaderFields {
            dest: coords(&t, t.node_at([2, 1, 1]), 0),
            dva: 6,
            ..Default::default()
        }
        .pack()
            ^ 1 << (lsb::ECC + 3);
        tb.queue[xm].extend(packet_with_header(&p, h, 2, 4, 6));
        let mut orphan = packet(&p, coords(&t, t.node_at([2, 1, 1]), 0), 2, 3, 7);
        orphan[0].head = false;
        tb.queue[xm].extend(orphan);
        tb.queue[xm].extend(good(8));
        bad_count[xm] += 2;
        if bits == 64 {
            // a one-flit packet cannot hold a 64-bit header
            let mut tr = packet(&p, coords(&t, t.node_at([2, 1, 1]), 0), 0, 2, 9);
            tr.truncate(1);
            tr[0].tail = true;
            tb.queue[l0].extend(tr);
            tb.queue[l0].extend(good(10));
            bad_count[l0] += 1;
        }
        tb.run(200);
        let c = tb.r.counters().clone();
        assert_eq!(&c.dropped_packets[..], &bad_count[..], "{bits}-bit");
        assert!(c
            .flit_errors
            .iter()
            .chain(c.credit_errors.iter())
            .all(|&x| x == 0));
        // only the good packets came out, whole
        let heads: Vec<u64> = tb
            .out
            .iter()
            .filter(|x| x.2.head)
            .map(|x| dva(x.2.low128()))
            .collect();
        let n_good = if bits == 64 { 4 } else { 3 };
        assert_eq!(tb.out.len(), n_good * 6);
        if bits != 64 {
            let mut h = heads.clone();
            h.sort_unstable();
            assert_eq!(h, vec![2, 5, 8]);
        }
        // every flit sent in, good or bad, was credited back upstream
        for port in 0..t.num_ports() {
            assert!(
                tb.up_credits[port].iter().all(|&c| c == p.buffer_flits),
                "port {port}"
            );
        }
        assert_eq!(tb.r.buffered_total(), 0);
    }
}

/// Random traffic on every input with random downstream credit return.
fn stress(p: &RouterParams, node: usize, cycles: u64, opt: HarnessOptions, seed: u64) {
    let mut r = Router::new(p, node).unwrap();
    r.set_header_check(opt.check);
    let mut h = RouterHarness::new(p, node, opt, seed);
    let ports = p.num_ports();
    let mut flits = 0u64;
    for cyc in 0..cycles + 20_000 {
        if cyc == cycles {
            h.stop_injection();
        }
        let o = r.outputs();
        // exact credit invariant: credits + flits held downstream + flit on the wire = buffer
        for port in 0..ports {
            for vc in 0..p.num_vcs() {
                let on_wire = usize::from(o.flit[port].is_some_and(|f| f.vc as usize == vc));
                assert_eq!(
                    r.credits(port, vc) as usize + h.sink_held(port, vc) + on_wire,
                    p.buffer_flits,
                    "cycle {cyc} port {port} vc {vc}"
                );
                assert!(r.buffered(port, vc) <= p.buffer_flits);
            }
        }
        flits += o.flit.iter().filter(|f| f.is_some()).count() as u64;
        let inp = h.drive().clone();
        h.advance(&o);
        r.tick(&inp);
        if cyc > cycles
            && h.quiet()
            && r.buffered_total() == 0
            && o.flit.iter().all(|f| f.is_none())
        {
            break;
        }
    }
    let rep = h.report();
    assert!(rep.errors.is_empty(), "{:?}", rep.errors);
    assert!(h.quiet(), "not drained: {rep:?}");
    assert!(h.credits_full());
    assert_eq!(rep.delivered, rep.injected);
    assert!(rep.injected > 100, "{rep:?}");
    let c = r.counters();
    assert_eq!(&c.dropped_packets[..], &rep.bad_injected[..]);
    assert!(c
        .flit_errors
        .iter()
        .chain(c.credit_errors.iter())
        .all(|&x| x == 0));
    for port in 0..ports {
        for vc in 0..p.num_vcs() {
            assert_eq!(r.credits(port, vc) as usize, p.buffer_flits);
            assert!(!r.ovc_busy(port, vc));
        }
    }
    assert_eq!(flits, rep.flits_out);
    eprintln!(
        "stress seed {seed}: {} packets, {} flits, dropped {:?}",
        rep.injected,
        rep.flits_out,
        &rep.bad_injected[..ports]
    );
}

#[test]
fn random_traffic_keeps_credits_buffers_order_and_packets_intact() {
    let points = [
        (params([4, 4, 4], [true; 3], 2, 2, 128), [1, 2, 3]),
        (params([4, 4, 4], [false; 3], 1, 2, 64), [0, 3, 1]),
        (
            params([8, 4, 1], [true, false, false], 2, 3, 256),
            [7, 0, 0],
        ),
        (params([3, 2, 5], [true, true, false], 1, 3, 128), [2, 1, 4]),
        (params([16, 16, 16], [true; 3], 2, 1, 64), [15, 0, 8]),
    ];
    for (i, (p, at)) in points.iter().enumerate() {
        let node = p.topology.node_at(*at);
        for (j, (start, drain, bad)) in [(0.02, 0.9, 0.1), (0.2, 0.3, 0.05), (0.5, 0.95, 0.0)]
            .into_iter()
            .enumerate()
        {
            let opt = HarnessOptions {
                start,
                drain,
                bad,
                bubble: 0.15,
                check: ecc_matches,
                uniform_ports: j == 2,
                ..Default::default()
            };
            stress(p, node, 20_000, opt, (i * 10 + j) as u64);
        }
    }
}

/// Accepted flits per cycle per port with every input VC always holding a
/// packet and output ports uniform (the saturation of `router_figures`).
fn saturation(p: &RouterParams, cycles: u64) -> f64 {
    let opt = HarnessOptions {
        start: 1.0,
        bubble: 0.0,
        drain: 1.0,
        uniform_ports: true,
        ..Default::default()
    };
    let mut h = RouterHarness::new(p, 0, opt, 11);
    let mut r = Router::new(p, 0).unwrap();
    let mut flits = 0u64;
    for t in 0..cycles + 2_000 {
        let inp = h.drive().clone();
        let out = r.outputs();
        if t >= 2_000 {
            flits += out.flit.iter().filter(|f| f.is_some()).count() as u64;
        }
        h.advance(&out);
        r.tick(&inp);
    }
    assert!(h.report().errors.is_empty(), "{:?}", h.report().errors);
    flits as f64 / (cycles * p.num_ports() as u64) as f64
}

/// The matching allocators keep every invariant of the separable one under
/// random traffic with bad packets (drops), and match more: iSLIP with 2
/// rounds and the wavefront beat separable at saturation, iSLIP with one
/// round does not (it is a separable allocator too).
#[test]
fn matching_allocators_keep_the_invariants_and_raise_saturation() {
    for (k, (allocator, it)) in [
        (Allocator::Islip, 1),
        (Allocator::Islip, 2),
        (Allocator::Islip, 4),
        (Allocator::Wavefront, 1),
    ]
    .into_iter()
    .enumerate()
    {
        for (i, p) in [
            params([4, 4, 4], [true; 3], 2, 2, 128),
            params([3, 2, 5], [true, true, false], 1, 3, 64),
        ]
        .into_iter()
        .enumerate()
        {
            let p = RouterParams {
                allocator,
                alloc_iterations: it,
                ..p
            };
            let node = p.topology.node_at([1, 1, 1]);
            for (j, (start, drain, bad)) in [(0.2, 0.3, 0.05), (0.5, 0.95, 0.02)]
                .into_iter()
                .enumerate()
            {
                let opt = HarnessOptions {
                    start,
                    drain,
                    bad,
                    bubble: 0.15,
                    check: ecc_matches,
                    uniform_ports: j == 1,
                    ..Default::default()
                };
                stress(&p, node, 10_000, opt, (100 + k * 10 + i * 2 + j) as u64);
            }
        }
    }
    let with = |allocator, alloc_iterations| RouterParams {
        allocator,
        alloc_iterations,
        ..Default::default()
    };
    let sep = saturation(&with(Allocator::Separable, 1), 20_000);
    let islip1 = saturation(&with(Allocator::Islip, 1), 20_000);
    let islip2 = saturation(&with(Allocator::Islip, 2), 20_000);
    let wf = saturation(&with(Allocator::Wavefront, 1), 20_000);
    eprintln!(
        "saturation: separable {sep:.3}, islip1 {islip1:.3}, islip2 {islip2:.3}, wavefront {wf:.3}"
    );
    assert!((0.62..0.70).contains(&sep), "{sep}");
    assert!((islip1 - sep).abs() < 0.03, "{islip1} vs {sep}");
    assert!(islip2 > sep + 0.04, "{islip2} vs {sep}");
    assert!(wf > sep + 0.04, "{wf} vs {sep}");
}

/// With `cover`, the good packets of every (input port, VC) walk through
/// every destination offset: after enough packets each combination is
/// reached, and a harness at another node continues the walks where the
/// last one stopped (the co-simulation bench moves the router per phase).
#[test]
fn the_destination_walk_reaches_every_offset_of_every_input_vc() {
    use exanet_sim::router::params::MAX_VCS;
    let p = params([3, 5, 2], [true, true, false], 2, 2, 128);
    let ports = p.num_ports();
    // A light load (about 0.2 flits per input port and cycle): class 1 has
    // strict priority, so a saturating one would starve class 0.
    let opt = |from: Vec<u32>| HarnessOptions {
        start: 0.005,
        drain: 1.0,
        bubble: 0.1,
        bad: 0.05,
        cover: true,
        cover_from: from,
        ..Default::default()
    };
    let run = |node: usize, from: Vec<u32>, cycles: u64| {
        let mut r = Router::new(&p, node).unwrap();
        let mut h = RouterHarness::new(&p, node, opt(from), 11 + node as u64);
        for _ in 0..cycles {
            let o = r.outputs();
            let inp = h.drive().clone();
            h.advance(&o);
            r.tick(&inp);
        }
        assert!(h.report().errors.is_empty(), "{:?}", h.report().errors);
        h
    };
    let targets = p.topology.num_nodes() * p.topology.local_ports;
    let count = |c: &[bool]| {
        (0..ports * MAX_VCS)
            .filter(|s| s % MAX_VCS < p.num_vcs())
            .map(|s| {
                c[s * targets..(s + 1) * targets]
                    .iter()
                    .filter(|&&b| b)
                    .count()
            })
            .sum::<usize>()
    };
    // A short run at node 7 reaches part of the combinations; the walk
    // continued at node 22 (another position) completes them.
    let h1 = run(7, Vec::new(), 400);
    let first = count(h1.covered());
    assert!(
        first > 0 && first < ports * p.num_vcs() * targets,
        "{first}"
    );
    let h2 = run(22, h1.cover_next(), 40_000);
    let all: Vec<bool> = h1
        .covered()
        .iter()
        .zip(h2.covered())
        .map(|(a, b)| *a | *b)
        .collect();
    let per_slot: Vec<usize> = (0..ports * MAX_VCS)
        .filter(|s| s % MAX_VCS < p.num_vcs())
        .map(|s| {
            all[s * targets..(s + 1) * targets]
                .iter()
                .filter(|&&b| b)
                .count()
        })
        .collect();
    assert_eq!(
        count(&all),
        ports * p.num_vcs() * targets,
        "per (port, vc): {per_slot:?}; {:?}",
        h2.report()
    );
    // The offset index of a destination is relative to the router.
    let d = Coords {
        x: 1,
        y: 0,
        z: 1,
        fpga: 0,
    };
    let here = p.topology.coords(22);
    let want = ((1 + 3 - here[0]) % 3 + 3 * ((5 - here[1]) % 5 + 5 * ((1 + 2 - here[2]) % 2)))
        * p.topology.local_ports;
    assert_eq!(h2.target_of(d), want);
}
