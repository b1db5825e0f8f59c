;;; emacs_eglot.el --- drive `atom-contracts server' through eglot, in batch  -*- lexical-binding: t -*-
;; What a user of Emacs + eglot sees, asked of eglot's own functions with no display:
;;
;;   emacs --batch -q --eval '(package-activate-all)' -l INIT.el \
;;         -l docs/editors/emacs_eglot.el FILE.py [UNDECODABLE.py]
;;
;; INIT.el holds the eglot block of docs/editors.md (eglot-ensure from python-mode-hook);
;; eglot is Emacs 29's own, or Debian's elpa-eglot on Emacs 28, a package whose autoloads
;; (`eglot-ensure' among them) exist once packages are activated, as a user's Emacs does
;; before reading their init file. FILE.py is visited as a user visits it, and one line
;; is printed per thing the editor shows:
;;
;;   diagnostic LINE:COL CODE MESSAGE   each Flymake diagnostic eglot made of the push
;;   hover KIND FIRST-LINE              what eldoc shows on the first diagnostic
;;   actions AT: TITLE | TITLE          M-x eglot-code-actions, at the statement's `assert'
;;                                      keyword (the cursor alone, as most editors ask) and
;;                                      at its end (eglot's own bounds there)
;;   settings debounceMs N: COUNT       diagnostics 2 s after an edit, with debounceMs N sent
;;                                      by eglot-signal-didChangeConfiguration
;;   undecodable LINE:COL CODE MESSAGE  UNDECODABLE.py's diagnostic: eglot cannot send its
;;                                      buffer, and asks about it by URI (a hover at point)
;;
;; Exits 0, or 1 when eglot never managed FILE.py or the server's diagnostics never came.
;; eglot is not required here: the init's hook is what must load and start it.
(require 'flymake)

(defun atom-contracts--wait (what seconds)
  "Run the event loop until WHAT returns non-nil or SECONDS pass; WHAT's value."
  (let ((deadline (+ (float-time) seconds)) (got nil))
    (while (and (not (setq got (funcall what))) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    got))

(defun atom-contracts--diagnostics ()
  (sort (flymake-diagnostics) (lambda (a b) (< (flymake-diagnostic-beg a)
                                               (flymake-diagnostic-beg b)))))

(defun atom-contracts--print-diagnostics (label)
  (dolist (d (atom-contracts--diagnostics))
    (let* ((beg (flymake-diagnostic-beg d))
           (text (flymake-diagnostic-text d)))
      ;; eglot 1.9 writes "SOURCE [CODE]: MESSAGE"; keep CODE and MESSAGE.
      (when (string-match "\\[\\([A-Z]+[0-9]+\\)\\]: \\(.*\\)" text)
        (setq text (format "%s %s" (match-string 1 text) (match-string 2 text))))
      (princ (format "%s %d:%d %s\n" label (line-number-at-pos beg)
                     (save-excursion (goto-char beg) (1+ (current-column))) text)))))

(defun atom-contracts--visit (file)
  "Visit FILE as a user does: the mode's hooks, then the command loop's (eglot-ensure)."
  (find-file file)
  (run-hooks 'post-command-hook)
  (atom-contracts--wait (lambda () (bound-and-true-p eglot--managed-mode)) 60))

(defun atom-contracts--hover-at (pos)
  "What eldoc shows for POS: eglot's rendering of the server's hover, and its kind."
  (save-excursion
    (goto-char pos)
    (let ((hover (jsonrpc-request (eglot--current-server-or-lose) :textDocument/hover
                                  (eglot--TextDocumentPositionParams))))
      (when hover
        (let ((contents (plist-get hover :contents)))
          (cons (plist-get contents :kind) (eglot--hover-info contents)))))))

(defun atom-contracts--action-titles (beg end)
  (mapconcat (lambda (a) (plist-get a :title)) (eglot-code-actions beg end) " | "))

(let* ((file (expand-file-name (pop command-line-args-left)))
       (undecodable (and command-line-args-left
                         (expand-file-name (pop command-line-args-left))))
       (ok nil))
  (unless (atom-contracts--visit file)
    (princ (format "eglot does not manage %s\n" file))
    (kill-emacs 1))
  (flymake-start)
  (setq ok (atom-contracts--wait #'flymake-diagnostics 60))
  (atom-contracts--print-diagnostics "diagnostic")
  (let ((first (car (atom-contracts--diagnostics))))
    (when first
      (let ((hover (atom-contracts--hover-at (flymake-diagnostic-beg first))))
        (princ (format "hover %s %s\n" (car hover)
                       (car (split-string (or (cdr hover) "") "\n")))))
      (save-excursion
        (goto-char (flymake-diagnostic-beg first))
        (python-nav-beginning-of-statement)
        (princ (format "actions keyword: %s\n"
                       (atom-contracts--action-titles (point) (point))))
        (python-nav-end-of-statement)
        (backward-char)
        (princ (format "actions end: %s\n"
                       (apply #'atom-contracts--action-titles (eglot--region-bounds)))))))
  ;; Settings at run time: a long debounce holds an edit's check back; 0 lets it through.
  (let ((server (eglot--current-server-or-lose))
        (before (length (flymake-diagnostics))))
    (dolist (debounce '(10000 0))
      (setq eglot-workspace-configuration `((:atom-contracts . (:debounceMs ,debounce))))
      (eglot-signal-didChangeConfiguration server)
      (goto-char (point-max))
      (insert "\n\ndef grow" (number-to-string debounce) "(blocks):\n    assert blocks > 0\n")
      ;; What eglot's idle timer does once the user stops typing (no timer is idle in batch).
      (eglot--signal-textDocument/didChange)
      (flymake-start)
      (atom-contracts--wait (lambda () (/= (length (flymake-diagnostics)) before)) 2)
      (princ (format "settings debounceMs %d: %d\n" debounce (length (flymake-diagnostics)))))
    (set-buffer-modified-p nil))
  (when undecodable
    (condition-case err
        (atom-contracts--visit undecodable)
      (error (princ (format "visiting %s: %S\n" undecodable err))))
    (with-current-buffer (get-file-buffer undecodable)
      (flymake-start)
      (ignore-errors (atom-contracts--hover-at (point-min)))
      (atom-contracts--wait #'flymake-diagnostics 30)
      (atom-contracts--print-diagnostics "undecodable")))
  (ignore-errors (eglot-shutdown (eglot-current-server)))
  (kill-emacs (if ok 0 1)))
