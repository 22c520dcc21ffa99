//! What a command did to reach its report, for `check --verbose`: the shortcuts it took
//! (a remembered report, an untouched commit, content shared with the base) and what it
//! had to read, and how. A trace is never part of a report, whose verdict is the same
//! whichever way the content was read; it lets a person see why a check took as long as
//! it did, and lets tests prove a fast path was taken.

use std::sync::Mutex;

/// The steps of one command, in the order they were noted.
#[derive(Debug, Default)]
pub struct Trace {
    steps: Mutex<Vec<String>>,
}

impl Trace {
    pub fn new() -> Trace {
        Trace::default()
    }

    /// Notes one step: a sentence for the person at the terminal.
    pub fn step(&self, text: impl Into<String>) {
        if let Ok(mut steps) = self.steps.lock() {
            steps.push(text.into());
        }
    }

    /// The steps noted so far.
    pub fn steps(&self) -> Vec<String> {
        self.steps
            .lock()
            .map(|steps| steps.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_come_back_in_the_order_they_were_noted() {
        let trace = Trace::new();
        assert!(trace.steps().is_empty());
        trace.step("first");
        trace.step(String::from("second"));
        assert_eq!(trace.steps(), ["first", "second"]);
    }
}
