//! Bit-width arithmetic shared by the models, the RTL generators and the
//! elaboration (one definition, so a width can never be computed two ways).

/// Bits needed to number `n` things `0..n`: `ceil(log2(n))`, at least 1
/// (a 1-entry index still has a 1-bit port).
pub fn index_bits(n: usize) -> u32 {
    (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1)
}

/// Bits needed to hold a count `0..=n` (e.g. a FIFO occupancy).
pub fn count_bits(n: usize) -> u32 {
    index_bits(n + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_bits_is_ceil_log2_at_least_one() {
        let cases = [
            (0, 1),
            (1, 1),
            (2, 1),
            (3, 2),
            (4, 2),
            (5, 3),
            (16, 4),
            (17, 5),
            (256, 8),
        ];
        for (n, want) in cases {
            assert_eq!(index_bits(n), want, "index_bits({n})");
        }
    }

    #[test]
    fn count_bits_holds_zero_to_n() {
        let cases = [
            (0, 1),
            (1, 1),
            (2, 2),
            (3, 2),
            (4, 3),
            (15, 4),
            (16, 5),
            (255, 8),
            (256, 9),
        ];
        for (n, want) in cases {
            assert_eq!(count_bits(n), want, "count_bits({n})");
            assert!(n < (1usize << count_bits(n)));
        }
    }
}
