/** The demo's job set: two ordinary reviews and one over regulated data. */
export const SAMPLE_JOBS = [
  {
    label: 'Supplier contracts',
    body: {
      type: 'doc_review',
      input: {
        question: 'What are our payment obligations and the penalties for paying late?',
        documents: [
          { id: 'msa-2024', text: 'Master services agreement.\n\nInvoices are payable within 30 days of receipt. Late payments accrue interest at 1.5% per month.' },
          { id: 'sow-17', text: 'Statement of work 17.\n\nThe fixed fee of EUR 48,000 is invoiced in three milestones. Milestone invoices follow the MSA payment terms.' },
          { id: 'amendment-2', text: 'Amendment 2 to the MSA.\n\nFrom 1 March the payment term is reduced to 21 days. The late interest rate is unchanged.' },
        ],
      },
      meta: { business_type: 'contract_review', tags: ['legal'] },
    },
  },
  {
    label: 'Outage postmortem',
    body: {
      type: 'doc_review',
      input: {
        question: 'What caused the 40-minute outage, and what would have prevented it?',
        documents: [
          { id: 'timeline', text: '14:02 cloud LLM API starts returning 503. 14:05 all agent jobs failing. 14:42 provider recovers.' },
          { id: 'slack-export', text: 'On-call: we have no fallback model configured. Every request goes to the one cloud endpoint.' },
          { id: 'dashboard-notes', text: 'Retry storms tripled the request rate during the outage, hitting the rate limit after recovery.' },
          { id: 'action-items', text: 'Proposed: a local model as fallback, circuit breakers per provider, a retry budget per job.' },
        ],
      },
      meta: { business_type: 'incident_review', priority: 'high' },
    },
  },
  {
    label: 'Patient records (sensitive)',
    body: {
      type: 'doc_review',
      input: {
        question: 'Which patients need a follow-up appointment within two weeks?',
        documents: [
          { id: 'record-0191', text: 'Patient 0191, 67 y. Post-operative check after hip replacement; wound healing normal; review in 6 weeks.' },
          { id: 'record-0207', text: 'Patient 0207, 54 y. Elevated blood pressure 165/100 despite medication; re-check in 10 days.' },
          { id: 'record-0233', text: 'Patient 0233, 41 y. Abnormal ECG findings; cardiology referral requested within one week.' },
        ],
      },
      meta: { sensitivity: 'sensitive', business_type: 'clinical_triage' },
    },
  },
] as const;
