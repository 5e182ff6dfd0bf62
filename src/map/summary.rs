//! The alignment summary printed at the end of a run, in bowtie2's layout
//! (which MultiQC's bowtie2 module parses).

/// How many times reads and pairs aligned, bowtie2's categories.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Single-end reads aligned 0 times, exactly once, more than once.
    pub unpaired: [u64; 3],
    /// Pairs aligned concordantly (as proper pairs) 0 times, exactly once,
    /// more than once.
    pub concordant: [u64; 3],
    /// Pairs not concordant whose mates each aligned exactly once.
    pub discordant: u64,
    /// The mates of the pairs neither concordant nor discordant: aligned 0
    /// times, exactly once, more than once.
    pub mates: [u64; 3],
}

/// 0, 1 or 2 (more than once) for a count of alignments.
pub(super) fn times(n: u64) -> usize {
    n.min(2) as usize
}

impl Summary {
    pub(super) fn add(&mut self, o: &Summary) {
        for k in 0..3 {
            self.unpaired[k] += o.unpaired[k];
            self.concordant[k] += o.concordant[k];
            self.mates[k] += o.mates[k];
        }
        self.discordant += o.discordant;
    }

    /// A single read with `n` alignments.
    pub(super) fn single(&mut self, n: u64) {
        self.unpaired[times(n)] += 1;
    }

    /// A pair with `proper` proper pairs found and its mates' alignment
    /// counts.
    pub(super) fn pair(&mut self, proper: u64, n1: u64, n2: u64) {
        if proper > 0 {
            self.concordant[times(proper)] += 1;
            return;
        }
        self.concordant[0] += 1;
        if n1 == 1 && n2 == 1 {
            self.discordant += 1;
        } else {
            self.mates[times(n1)] += 1;
            self.mates[times(n2)] += 1;
        }
    }

    /// bowtie2's summary lines (paired input when `paired`).
    pub fn bowtie2_text(&self, paired: bool) -> String {
        let pct = |a: u64, b: u64| 100.0 * a as f64 / b.max(1) as f64;
        let mut s = String::new();
        if paired {
            let pairs: u64 = self.concordant.iter().sum();
            let [c0, c1, cm] = self.concordant;
            s += &format!("{pairs} reads; of these:\n");
            s += &format!(
                "  {pairs} ({:.2}%) were paired; of these:\n",
                pct(pairs, pairs)
            );
            s += &format!(
                "    {c0} ({:.2}%) aligned concordantly 0 times\n",
                pct(c0, pairs)
            );
            s += &format!(
                "    {c1} ({:.2}%) aligned concordantly exactly 1 time\n",
                pct(c1, pairs)
            );
            s += &format!(
                "    {cm} ({:.2}%) aligned concordantly >1 times\n",
                pct(cm, pairs)
            );
            s += "    ----\n";
            let d = self.discordant;
            s += &format!("    {c0} pairs aligned concordantly 0 times; of these:\n");
            s += &format!(
                "      {d} ({:.2}%) aligned discordantly 1 time\n",
                pct(d, c0)
            );
            s += "    ----\n";
            let rest = c0 - d;
            let mates = 2 * rest;
            let [m0, m1, mm] = self.mates;
            s += &format!(
                "    {rest} pairs aligned 0 times concordantly or discordantly; of these:\n"
            );
            s += &format!("      {mates} mates make up the pairs; of these:\n");
            s += &format!("        {m0} ({:.2}%) aligned 0 times\n", pct(m0, mates));
            s += &format!(
                "        {m1} ({:.2}%) aligned exactly 1 time\n",
                pct(m1, mates)
            );
            s += &format!("        {mm} ({:.2}%) aligned >1 times\n", pct(mm, mates));
            let aligned = 2 * (c1 + cm + d) + m1 + mm;
            s += &format!("{:.2}% overall alignment rate\n", pct(aligned, 2 * pairs));
        } else {
            let reads: u64 = self.unpaired.iter().sum();
            let [u0, u1, um] = self.unpaired;
            s += &format!("{reads} reads; of these:\n");
            s += &format!(
                "  {reads} ({:.2}%) were unpaired; of these:\n",
                pct(reads, reads)
            );
            s += &format!("    {u0} ({:.2}%) aligned 0 times\n", pct(u0, reads));
            s += &format!("    {u1} ({:.2}%) aligned exactly 1 time\n", pct(u1, reads));
            s += &format!("    {um} ({:.2}%) aligned >1 times\n", pct(um, reads));
            s += &format!("{:.2}% overall alignment rate\n", pct(u1 + um, reads));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text is bowtie2 2.5.0's, line for line, for the counts bowtie2
    /// printed (its logs of the chrM pairs and of 500 chrM reads, kept
    /// here verbatim).
    #[test]
    fn layout_is_bowtie2s() {
        let paired = "7720 reads; of these:
  7720 (100.00%) were paired; of these:
    5646 (73.13%) aligned concordantly 0 times
    2074 (26.87%) aligned concordantly exactly 1 time
    0 (0.00%) aligned concordantly >1 times
    ----
    5646 pairs aligned concordantly 0 times; of these:
      5448 (96.49%) aligned discordantly 1 time
    ----
    198 pairs aligned 0 times concordantly or discordantly; of these:
      396 mates make up the pairs; of these:
        200 (50.51%) aligned 0 times
        196 (49.49%) aligned exactly 1 time
        0 (0.00%) aligned >1 times
98.70% overall alignment rate
";
        let s = Summary {
            concordant: [5646, 2074, 0],
            discordant: 5448,
            mates: [200, 196, 0],
            ..Summary::default()
        };
        assert_eq!(s.bowtie2_text(true), paired);
        let single = "500 reads; of these:
  500 (100.00%) were unpaired; of these:
    6 (1.20%) aligned 0 times
    494 (98.80%) aligned exactly 1 time
    0 (0.00%) aligned >1 times
98.80% overall alignment rate
";
        let s = Summary {
            unpaired: [6, 494, 0],
            ..Summary::default()
        };
        assert_eq!(s.bowtie2_text(false), single);
    }

    #[test]
    fn pairs_fall_in_one_category() {
        let mut s = Summary::default();
        s.pair(1, 1, 1);
        s.pair(3, 2, 2);
        s.pair(0, 1, 1);
        s.pair(0, 0, 5);
        assert_eq!(s.concordant, [2, 1, 1]);
        assert_eq!(s.discordant, 1);
        assert_eq!(s.mates, [1, 0, 1]);
    }
}
