//! Review scoring: a review's rubric scores, confidence and issues in; a verdict out.
