import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { z } from 'zod';
import { App } from './App';
import './styles.css';

// The Content-Security-Policy forbids eval: zod must not even try its compiled parsers.
z.config({ jitless: true });

const root = document.getElementById('root');
if (root)
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
